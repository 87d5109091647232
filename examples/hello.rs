//! The floor `bernstein --version` is held to (benches/README.md): a
//! hello-world built with the same release profile, printing a line of the
//! same length.

fn main() {
    println!("bernstein {}", env!("CARGO_PKG_VERSION"));
}
