//! The `.nnue` file: hashes, size formula, bit-exact round trips, refusals.

mod common;

use common::mapping;
use vzero_nnue::format::{self, decode, encode, file_size};
use vzero_nnue::layers::{padded_inputs, Affine, LayerStack, HIDDEN1, HIDDEN2, STACK_INPUTS};
use vzero_nnue::{FsfMapping, Network};

/// A net with every value pseudo-random over its whole type range.
fn noisy_net(m: &FsfMapping, seed: u64, description: &str) -> Network {
    let mut x = seed;
    let mut next = move || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 32) as u32
    };
    let mut net = Network::zeroed(m.dimensions(), description);
    let ft = net.feature_transformer_mut();
    ft.biases_mut().iter_mut().for_each(|v| *v = next() as i16);
    ft.weights_mut().iter_mut().for_each(|v| *v = next() as i16);
    ft.psqt_mut().iter_mut().for_each(|v| *v = next() as i32);
    let mut layer = |i: usize, o: usize| {
        let b = (0..o).map(|_| next() as i32).collect();
        let w = (0..o * padded_inputs(i)).map(|_| next() as i8).collect();
        Affine::new(i, o, b, w).unwrap()
    };
    let stacks: Vec<LayerStack> = (0..8)
        .map(|_| LayerStack::new(layer(STACK_INPUTS, HIDDEN1), layer(HIDDEN1, HIDDEN2), layer(HIDDEN2, 1)).unwrap())
        .collect();
    Network::new(description.as_bytes().to_vec(), net.feature_transformer().clone(), stacks).unwrap()
}

#[test]
fn hashes_are_fairy_stockfish_s() {
    assert_eq!(format::VERSION, 0x7AF3_2F20);
    assert_eq!(format::FT_HASH, 0x5f23_48b8);
    assert_eq!(format::NET_HASH, 0x6333_76ca);
    assert_eq!(format::HEADER_HASH, 0x3c10_3e72);
}

#[test]
fn file_size_follows_the_formula() {
    assert_eq!(format::STACK_BYTES, 4 + 16 * 4 + 16 * 1024 + 32 * 4 + 32 * 32 + 4 + 32);
    assert_eq!(file_size(0, 0), 12 + 4 + 1024 + 8 * 17_640);
    assert_eq!(file_size(86_016, 0), 90_975_056); // empire, ≈ 86.8 MiB
    assert_eq!(file_size(106_496, 5), 112_601_941); // shogun, ≈ 107.4 MiB
    for name in ["empire", "shogun"] {
        let (_, m) = mapping(name);
        let desc = "a description";
        let bytes = encode(&Network::material(&m).clone_with_description(desc));
        assert_eq!(bytes.len(), file_size(m.dimensions(), desc.len()), "{name}");
    }
}

trait WithDescription {
    fn clone_with_description(self, d: &str) -> Network;
}
impl WithDescription for Network {
    fn clone_with_description(mut self, d: &str) -> Network {
        self.set_description(d);
        self
    }
}

#[test]
fn write_then_read_is_bit_exact() {
    let (_, m) = mapping("shogun");
    let net = noisy_net(&m, 1, "round trip \u{2713}");
    let dir = std::env::temp_dir().join(format!("vzero-nnue-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("shogun-test.nnue");
    format::write_file(&path, &net).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes, encode(&net));
    let back = format::read_file(&path, &m).unwrap();
    assert_eq!(back, net);
    assert_eq!(encode(&back), bytes);
    assert_eq!(back.description_text(), "round trip \u{2713}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn truncated_files_and_other_variants_files_are_refused() {
    let (_, empire) = mapping("empire");
    let (_, shogun) = mapping("shogun");
    let bytes = encode(&Network::material(&shogun));
    let len = bytes.len();
    // Cut inside the weights, inside the last stack, inside the header.
    let e = decode(&bytes[..len / 2], &shogun, "s.nnue").unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "s.nnue: truncated: the file has {} bytes and ends inside the feature transformer weights (106496 rows)",
            len / 2
        )),
        "{e}"
    );
    assert!(e.ends_with(&format!("(a net for shogun has {len} bytes)")), "{e}");
    let e = decode(&bytes[..len - 1], &shogun, "s.nnue").unwrap_err().to_string();
    assert!(e.contains("ends inside layer stack 7"), "{e}");
    let e = decode(&bytes[..10], &shogun, "s.nnue").unwrap_err().to_string();
    assert!(e.contains("ends inside the header"), "{e}");
    // A shogun net read for empire: 20,480 features too many.
    let e = decode(&bytes, &empire, "shogun.nnue").unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "shogun.nnue: {} bytes after the last layer stack: not a net for empire (86016 features, {} bytes); its length fits a net of 106496 features: a net for shogun",
            (106_496 - 86_016) * 1056,
            file_size(86_016, bytes[8] as usize)
        )
    );
    // An empire net read for shogun ends early.
    let eb = encode(&Network::material(&empire));
    let e = decode(&eb, &shogun, "empire.nnue").unwrap_err().to_string();
    assert!(e.contains("truncated") && e.contains("a net for shogun"), "{e}");
    // Wrong version, wrong hashes.
    let mut bad = bytes.clone();
    bad[0] ^= 1;
    let e = decode(&bad, &shogun, "s.nnue").unwrap_err().to_string();
    assert_eq!(e, "s.nnue: not a Fairy-Stockfish NNUE file: version 0x7af32f21, expected 0x7af32f20");
    let mut bad = bytes.clone();
    bad[4] ^= 1;
    let e = decode(&bad, &shogun, "s.nnue").unwrap_err().to_string();
    assert!(e.contains("network hash is 0x3c103e73, expected 0x3c103e72"), "{e}");
    let mut bad = bytes.clone();
    let stack7 = len - format::STACK_BYTES;
    bad[stack7] ^= 1;
    let e = decode(&bad, &shogun, "s.nnue").unwrap_err().to_string();
    assert!(e.contains("layer stack 7 hash is 0x633376cb"), "{e}");
    // A description longer than the file.
    let mut bad = bytes[..40].to_vec();
    bad[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = decode(&bad, &shogun, "s.nnue").unwrap_err().to_string();
    assert!(e.contains("ends inside the description"), "{e}");
    // A missing file.
    let e = format::read_file(std::path::Path::new("/nonexistent/x.nnue"), &shogun).unwrap_err().to_string();
    assert!(e.starts_with("/nonexistent/x.nnue: "), "{e}");
}
