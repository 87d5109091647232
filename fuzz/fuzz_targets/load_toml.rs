//! Arbitrary bytes as a `.toml` fragment, through validation, merge, rendering and explain.
#![no_main]

mod common;

use bernstein_skills::layer::Form;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::one_form(data, Form::Toml));
