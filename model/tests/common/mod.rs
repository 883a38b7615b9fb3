//! Helpers shared by the integration tests.

/// Small deterministic PRNG (xorshift) so inputs don't depend on torch's global RNG.
pub struct Rng(pub u64);

#[allow(dead_code)] // not every test file uses every method
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}
