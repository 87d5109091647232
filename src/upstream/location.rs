//! Where a source's repository is, judged as git and curl read its URL.
//!
//! `[allow]` decides on a URL's host and owner, so the URL has to be read
//! the way the program that connects reads it, not split by hand: git
//! hands an https URL to curl, which (like every browser, and the WHATWG
//! URL standard the `url` crate implements) ends the authority at the
//! first `/`, `?` or `#`, takes the host after the last `@` of that
//! authority, and resolves `.` and `..` segments before the request is
//! sent. So `https://10.0.0.1:9?@github.com/acme/skills` connects to
//! 10.0.0.1, and `https://host/acme/../skills.git` asks for
//! `/skills.git`. Rather than guess at what a server makes of a URL that
//! parsers read differently, what cannot be judged is refused: a query or
//! a fragment, a backslash (a `/` to WHATWG, a character to others), a
//! percent-escape (which the server decodes after the owner was judged),
//! and a path that normalising changes (`.`, `..`, `%2e`, empty
//! segments).
//!
//! The scp-like form git takes, `user@host:path`, is no URL and has no
//! parser: its rule here is git's own reading, narrowed. A user name of
//! letters, digits, `.`, `_` and `-`; a host of letters, digits, `.` and
//! `-` (or an `[IPv6]` address); a path with no `.`, `..` or empty
//! component and not starting with `~` (a home directory on the server);
//! the owner is its first component.
//!
//! Credentials in a URL are refused wherever a URL is read: the sources
//! file and the lock are committed, and a message or a JSON document may
//! end up in a CI log. A credential belongs in the person's git
//! configuration (a credential helper, or `url.<base>.insteadOf`), which
//! the system `git` reads. Every URL a message shows goes through
//! [`Shown`], which writes `user:***@` for a password and `***@` for an
//! https user name (a token given as the user name is a secret too), as
//! uv's `DisplaySafeUrl` and npm do; [`redact_text`] does the same to text
//! git wrote.

use std::borrow::Cow;
use std::fmt;

/// How a repository is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `https://HOST/PATH`.
    Https,
    /// `ssh://[USER@]HOST[:PORT]/PATH`.
    Ssh,
    /// `USER@HOST:PATH`, git's scp-like form of ssh.
    Scp,
    /// An absolute path, or `file://`.
    Local,
}

/// A repository URL, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// How it is reached.
    pub transport: Transport,
    /// The host, lowercase (`None` for a local repository).
    pub host: Option<String>,
    /// The path on the host, without its leading `/`.
    pub path: String,
}

impl Location {
    /// The owner: the first component of the path on the host (`acme` of
    /// `github.com/acme/skills`); `None` for a local repository.
    pub fn owner(&self) -> Option<&str> {
        self.host.as_ref()?;
        Some(self.path.split('/').next().unwrap_or(""))
    }
}

/// Why a URL cannot be a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It holds a credential: a password, or an https user name.
    Credential,
    /// Anything else, in words.
    Other(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Credential => f.write_str(CREDENTIAL_ADVICE),
            Refusal::Other(m) => f.write_str(m),
        }
    }
}

/// What a refused credential is told.
pub const CREDENTIAL_ADVICE: &str = "holds a credential, which would be committed in sources.toml and sources.lock and printed in logs; \
     name the repository without it, and give git the credential outside the project: a credential helper \
     (`git config --global credential.helper store`, or your host's own, such as `gh auth setup-git`), or \
     `git config --global url.\"https://USER:TOKEN@HOST/\".insteadOf \"https://HOST/\"`";

fn other(m: impl Into<String>) -> Refusal {
    Refusal::Other(m.into())
}

/// Reads `url` as git would connect to it, refusing what cannot be judged
/// (the module docs).
pub fn parse(url: &str) -> Result<Location, Refusal> {
    if url.is_empty() || url.starts_with('-') {
        return Err(other("empty, or starts with '-'"));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(other("holds a space or a control character"));
    }
    if url.contains('\\') {
        return Err(other(
            "holds a backslash, which URL parsers read as '/' or as itself; write '/'",
        ));
    }
    if let Some(rest) = url.strip_prefix("https://") {
        return parse_url(url, rest, Transport::Https);
    }
    if let Some(rest) = url.strip_prefix("ssh://") {
        return parse_url(url, rest, Transport::Ssh);
    }
    if let Some(rest) = url.strip_prefix("file://") {
        return parse_url(url, rest, Transport::Local);
    }
    if url.starts_with('/') {
        return Ok(Location {
            transport: Transport::Local,
            host: None,
            path: url.to_owned(),
        });
    }
    if !url.contains("://")
        && let Some((left, path)) = url.split_once(':')
        && !left.contains('/')
        && left.contains('@')
    {
        return parse_scp(left, path);
    }
    Err(other(
        "must start with https://, ssh://, file:// or / (an absolute path), or be user@host:path",
    ))
}

/// A URL of a scheme the `url` crate parses; `rest` is what follows
/// `SCHEME://`.
fn parse_url(url: &str, rest: &str, transport: Transport) -> Result<Location, Refusal> {
    if url.contains(['?', '#']) {
        return Err(other(
            "holds a query ('?') or a fragment ('#'), which a repository's URL has no use for: git and curl connect to the host before it, whatever follows",
        ));
    }
    if url.contains('%') {
        return Err(other(
            "holds a percent-escape, which the server decodes after the URL was judged; write the character itself",
        ));
    }
    let parsed = url::Url::parse(url).map_err(|e| other(format!("not a URL: {e}")))?;
    if parsed.password().is_some() {
        return Err(Refusal::Credential);
    }
    let user = parsed.username();
    if !user.is_empty() && (transport != Transport::Ssh || !plain_user(user)) {
        return Err(Refusal::Credential);
    }
    // The path as written, and as the parser reads it: they must agree.
    let written = rest.find('/').map_or("", |i| &rest[i..]);
    let read = parsed.path();
    if !(written == read || written.is_empty() && read == "/") {
        return Err(other(format!(
            "its path reads as '{}' once '.' and '..' segments are resolved, as git and curl resolve them; write that",
            crate::text::escape(read)
        )));
    }
    let path = read.strip_prefix('/').unwrap_or(read);
    if transport == Transport::Local {
        return match parsed.host_str() {
            None | Some("") | Some("localhost") => Ok(Location {
                transport,
                host: None,
                path: read.to_owned(),
            }),
            Some(_) => Err(other("a file:// URL names no host (file:///PATH)")),
        };
    }
    let host = parsed
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| other("names no host"))?
        .to_ascii_lowercase();
    if !(plain_host(&host) || host.starts_with('[')) {
        return Err(other(format!(
            "host '{}' is not a host name or an address",
            crate::text::escape(&host)
        )));
    }
    check_components(path)?;
    Ok(Location {
        transport,
        host: Some(host),
        path: path.to_owned(),
    })
}

/// `USER@HOST:PATH`.
fn parse_scp(left: &str, path: &str) -> Result<Location, Refusal> {
    let (user, host) = left.rsplit_once('@').unwrap_or(("", left));
    if !plain_user(user) {
        return Err(other(
            "in user@host:path, the user is letters, digits, '.', '_' and '-'",
        ));
    }
    let host = host.to_ascii_lowercase();
    if !plain_host(&host) {
        return Err(other(
            "in user@host:path, the host is letters, digits, '.' and '-'",
        ));
    }
    if path.starts_with('~') {
        return Err(other(
            "the path starts with '~' (a home directory on the server); name the repository's path",
        ));
    }
    let path = path.strip_prefix('/').unwrap_or(path);
    check_components(path)?;
    Ok(Location {
        transport: Transport::Scp,
        host: Some(host),
        path: path.to_owned(),
    })
}

/// A path on a host: some components, none empty, `.` or `..`.
fn check_components(path: &str) -> Result<(), Refusal> {
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        return Err(other("names no repository on the host"));
    }
    if path
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(other(
            "its path has an empty, '.' or '..' component; write the path as the server should read it",
        ));
    }
    Ok(())
}

fn plain_user(user: &str) -> bool {
    !user.is_empty()
        && !user.starts_with('-')
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

fn plain_host(host: &str) -> bool {
    !host.is_empty()
        && !host.starts_with(['-', '.'])
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-".contains(&b))
}

/// A host as `[allow]` names it, as the URL parser would write it
/// (lowercase; an international name in its ASCII form).
pub fn normal_host(host: &str) -> String {
    match url::Host::parse(host) {
        Ok(h) => h.to_string(),
        Err(_) => host.to_ascii_lowercase(),
    }
}

/// `url` with its credentials hidden: `https://user:***@host/…` for a
/// password, `https://***@host/…` for an https user name (which may be a
/// token); an ssh user name (`git@`) is kept.
pub fn redacted(url: &str) -> Cow<'_, str> {
    let Some(scheme_end) = url.find("://") else {
        return Cow::Borrowed(url);
    };
    let after = scheme_end + 3;
    let authority_end = url[after..]
        .find(['/', '?', '#', '\\'])
        .map_or(url.len(), |i| after + i);
    let Some(at) = url[after..authority_end].rfind('@').map(|i| after + i) else {
        return Cow::Borrowed(url);
    };
    let userinfo = &url[after..at];
    let shown = match userinfo.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None if url[..scheme_end].eq_ignore_ascii_case("ssh") && plain_user(userinfo) => {
            return Cow::Borrowed(url);
        }
        None => "***".to_owned(),
    };
    Cow::Owned(format!("{}{shown}{}", &url[..after], &url[at..]))
}

/// `text` (what git wrote) with the credentials of every URL in it
/// hidden as [`redacted`] hides them.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        // The URL starts at its scheme: the letters before `://`.
        let start = rest[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+.-".contains(c)))
            .map_or(0, |j| j + 1);
        let end = rest[i..]
            .find(|c: char| c.is_whitespace() || "'\"<>`".contains(c))
            .map_or(rest.len(), |j| i + j);
        out.push_str(&rest[..start]);
        out.push_str(&redacted(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A URL as a message shows it: credentials hidden ([`redacted`]), then
/// escaped ([`crate::text::escape`]).
pub struct Shown<'a>(pub &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::text::escape(&redacted(self.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_owner(url: &str) -> (Option<String>, Option<String>) {
        let l = parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        (l.host.clone(), l.owner().map(str::to_owned))
    }

    #[test]
    fn hosts_and_owners_are_read_as_curl_and_git_read_them() {
        for (url, host, owner) in [
            ("https://github.com/acme/skills", "github.com", "acme"),
            ("https://GitHub.COM/acme/skills.git", "github.com", "acme"),
            ("https://github.com:443/acme/skills", "github.com", "acme"),
            (
                "ssh://git@Git.Example.com:22/acme/x.git",
                "git.example.com",
                "acme",
            ),
            ("git@github.com:acme/skills.git", "github.com", "acme"),
            ("git@github.com:/acme/skills.git", "github.com", "acme"),
            ("https://0x7f.1/acme/x", "127.0.0.1", "acme"),
        ] {
            assert_eq!(
                host_owner(url),
                (Some(host.to_owned()), Some(owner.to_owned())),
                "{url}"
            );
        }
        for url in [
            "/srv/git/skills",
            "file:///srv/git/skills",
            "file://localhost/srv/x",
        ] {
            assert_eq!(host_owner(url), (None, None), "{url}");
        }
    }

    #[test]
    fn what_cannot_be_judged_is_refused() {
        for url in [
            "https://10.0.0.1:9?@github.com/acme/skills",
            "https://10.0.0.1:9#@github.com/acme/skills",
            "https://10.0.0.1:9\\@github.com/acme/skills",
            "https://github.com/acme/../evil/skills",
            "https://github.com/acme/./skills",
            "https://github.com/acme/%2e%2e/evil",
            "https://github.com/%61cme/skills",
            "https://github.com//acme/skills",
            "https://github.com/",
            "git@github.com:acme/../evil",
            "git@github.com:~evil/x",
            "git@-oProxyCommand=x:acme/x",
            "-u@x:y",
            "http://github.com/acme/x",
            "ext::sh -c x",
            "file://evil.example.com/x",
        ] {
            assert!(parse(url).is_err(), "{url} must be refused");
        }
    }

    #[test]
    fn credentials_are_refused_and_never_shown() {
        for url in [
            "https://user:tok@github.com/acme/x",
            "https://tok@github.com/acme/x",
            "ssh://git:pw@github.com/acme/x",
        ] {
            assert_eq!(parse(url), Err(Refusal::Credential), "{url}");
            assert!(!Shown(url).to_string().contains("tok"), "{url}");
            assert!(!Shown(url).to_string().contains("pw"), "{url}");
        }
        assert_eq!(
            Shown("https://user:tok@github.com/acme/x").to_string(),
            "https://user:***@github.com/acme/x"
        );
        assert_eq!(
            Shown("https://tok@github.com/x").to_string(),
            "https://***@github.com/x"
        );
        assert_eq!(
            Shown("ssh://git@github.com/x").to_string(),
            "ssh://git@github.com/x"
        );
        assert!(parse("ssh://git@github.com/acme/x").is_ok());
        assert_eq!(
            redact_text("fatal: unable to access 'https://u:tok@h/x/': refused; see ssh://a:b@c/d"),
            "fatal: unable to access 'https://u:***@h/x/': refused; see ssh://a:***@c/d"
        );
    }
}
