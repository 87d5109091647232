//! SHA-256, the one digest the tool computes, records and prints.
//!
//! Every file the tool pins, records or compares is named by its SHA-256:
//! the files of an upstream source in `sources.lock` and the cache, each
//! file export wrote and the spec it wrote them under in the record, the
//! files a trusted project held. One type, [`Digest`], holds it as bytes
//! and writes it in the two forms those files use:
//!
//! - `sha256:HEX` (its [`Display`](fmt::Display), and [`Digest::parse`]):
//!   self-describing, where a reader meets it alone (`sources.lock`,
//!   `list --json`, messages);
//! - bare lowercase hexadecimal (`{:x}`, [`Digest::from_hex`], and its
//!   serde form): inside a file whose key already says `sha256` (export's
//!   record, the trust store) or as a name.
//!
//! A digest of something streamed (a record read or written, a file
//! copied) is computed as it passes: [`Hasher`] is an [`io::Write`], and
//! [`Hashing`] wraps an [`io::Read`].

use std::fmt;
use std::io;

use sha2::Digest as _;

/// The prefix of a digest's self-describing form.
pub const PREFIX: &str = "sha256:";

/// A SHA-256 digest.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The SHA-256 of `bytes`.
    pub fn of(bytes: impl AsRef<[u8]>) -> Digest {
        Digest(sha2::Sha256::digest(bytes.as_ref()).into())
    }

    /// The digest with these bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Digest {
        Digest(bytes)
    }

    /// Its 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// A digest written as 64 lowercase hexadecimal digits (what `{:x}`
    /// writes); `None` for anything else, uppercase digits included.
    pub fn from_hex(s: &str) -> Option<Digest> {
        let b = s.as_bytes();
        if b.len() != 64 {
            return None;
        }
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let mut out = [0u8; 32];
        for (o, pair) in out.iter_mut().zip(b.chunks_exact(2)) {
            *o = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(Digest(out))
    }

    /// A digest written as `sha256:` and 64 lowercase hexadecimal digits
    /// (what its `Display` writes); `None` for anything else.
    pub fn parse(s: &str) -> Option<Digest> {
        Digest::from_hex(s.strip_prefix(PREFIX)?)
    }

    /// Its 64 lowercase hexadecimal digits.
    pub fn to_hex(&self) -> String {
        let mut out = String::with_capacity(64);
        self.push_hex(&mut out);
        out
    }

    /// Appends its 64 lowercase hexadecimal digits to `out`.
    pub fn push_hex(&self, out: &mut String) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for b in self.0 {
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
    }
}

/// `sha256:` and 64 lowercase hexadecimal digits.
impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(PREFIX)?;
        fmt::LowerHex::fmt(self, f)
    }
}

/// The 64 lowercase hexadecimal digits alone.
impl fmt::LowerHex for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut hex = String::with_capacity(64);
        self.push_hex(&mut hex);
        f.write_str(&hex)
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// As 64 lowercase hexadecimal digits (the key of the field says what
/// they are).
impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Digest, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Digest;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a SHA-256 as 64 lowercase hexadecimal digits")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Digest, E> {
                Digest::from_hex(v)
                    .ok_or_else(|| E::custom("a sha256 is not 64 lowercase hexadecimal digits"))
            }
        }
        d.deserialize_str(Visit)
    }
}

/// A SHA-256 computed as bytes are written to it.
#[derive(Clone, Default)]
pub struct Hasher(sha2::Sha256);

impl Hasher {
    /// A hasher that has seen nothing.
    pub fn new() -> Hasher {
        Hasher::default()
    }

    /// Takes in `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of everything taken in.
    pub fn finish(self) -> Digest {
        Digest(self.0.finalize().into())
    }
}

impl io::Write for Hasher {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A reader that hashes and counts what it reads.
pub struct Hashing<R> {
    inner: R,
    hasher: Hasher,
    len: u64,
}

impl<R> Hashing<R> {
    /// Hashes what is read from `inner`.
    pub fn new(inner: R) -> Hashing<R> {
        Hashing {
            inner,
            hasher: Hasher::new(),
            len: 0,
        }
    }

    /// How many bytes were read so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Has nothing been read yet?
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The digest of what was read.
    pub fn finish(self) -> Digest {
        self.hasher.finish()
    }
}

impl<R: io::Read> io::Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn both_forms_read_back() {
        let d = Digest::of(b"");
        assert_eq!(format!("{d:x}"), EMPTY);
        assert_eq!(d.to_hex(), EMPTY);
        assert_eq!(d.to_string(), format!("sha256:{EMPTY}"));
        assert_eq!(Digest::from_hex(EMPTY), Some(d));
        assert_eq!(Digest::parse(&d.to_string()), Some(d));
        assert_eq!(serde_json::to_string(&d).unwrap(), format!("\"{EMPTY}\""));
        assert_eq!(
            serde_json::from_str::<Digest>(&format!("\"{EMPTY}\"")).unwrap(),
            d
        );
    }

    #[test]
    fn only_the_exact_forms_parse() {
        for bad in [
            "",
            &EMPTY[..63],
            &format!("{EMPTY}0"),
            &EMPTY.to_uppercase(),
            &format!("sha256:{EMPTY}"),
            &format!(" {}", &EMPTY[1..]),
            &format!("{}é", &EMPTY[..62]),
        ] {
            assert_eq!(Digest::from_hex(bad), None, "{bad}");
        }
        assert_eq!(Digest::parse(EMPTY), None);
        assert_eq!(Digest::parse(&format!("SHA256:{EMPTY}")), None);
        assert!(serde_json::from_str::<Digest>("\"x\"").is_err());
    }

    #[test]
    fn streaming_gives_the_digest_of_the_whole() {
        let text = b"the whole text, in pieces".repeat(1000);
        let mut h = Hasher::new();
        for piece in text.chunks(7) {
            h.write_all(piece).unwrap();
        }
        assert_eq!(h.finish(), Digest::of(&text));
        let mut r = Hashing::new(&text[..]);
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(r.len(), text.len() as u64);
        assert_eq!(r.finish(), Digest::of(&text));
    }
}
