//! xorshift64*: the small deterministic generator of the randomized tests
//! (managedFields sequences, the decode-error grammar check), the fuzz
//! smoke runs and the watch checker. A fixed seed makes every run identical;
//! no dependency. Not for anything a client sees.

/// The generator's state; a zero seed would stay zero, so `new` avoids it.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform enough in `0..bound`; 0 when `bound` is 0.
    pub fn below(&mut self, bound: usize) -> usize {
        if bound == 0 {
            0
        } else {
            (self.next_u64() % bound as u64) as usize
        }
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One of `items`, which must not be empty.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_xorshift64_star() {
        let mut rng = Rng::new(1);
        // x ^= x>>12; x ^= x<<25; x ^= x>>27; x * 0x2545F4914F6CDD1D, from 1.
        let mut x: u64 = 1;
        for _ in 0..5 {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            assert_eq!(rng.next_u64(), x.wrapping_mul(0x2545_f491_4f6c_dd1d));
        }
        assert_eq!(rng.below(0), 0);
        assert!((0..1000).all(|_| rng.below(7) < 7));
        assert_eq!(
            Rng::new(0).next_u64(),
            Rng::new(0x9e37_79b9_7f4a_7c15).next_u64()
        );
    }
}
