//! Prints the encoding layout of every built-in variant as Markdown (the README's "Generated
//! layout"): `cargo run -p vzero-encoding --example layout`.

fn main() {
    print!("{}", vzero_encoding::layout_markdown());
}
