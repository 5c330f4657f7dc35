//! A small deterministic random number generator (SplitMix64).
//!
//! Checks must be reproducible from a seed printed in a report, on every
//! platform and with no dependency, so the generator is spelled out here.
//! SplitMix64 passes BigCrush and is more than enough to pick test points.

/// SplitMix64 (Steele, Lea, Flood 2014): a 64-bit state advanced by a
/// Weyl sequence and scrambled by a fixed mixing function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose whole output sequence is determined by `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform real in `[0, 1)` with 53 random bits.
    pub fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform real in the closed range `[lo, hi]` (exactly `lo` when the
    /// range is a single point).
    pub fn real_in(&mut self, lo: f64, hi: f64) -> f64 {
        if lo >= hi {
            return lo;
        }
        // The affine map can round past `hi`; clamping keeps the promise
        // that every value lies inside the domain.
        (lo + (hi - lo) * self.next_unit()).clamp(lo, hi)
    }

    /// A uniform integer in the closed range `[lo, hi]`.
    pub fn int_in(&mut self, lo: i64, hi: i64) -> i64 {
        if lo >= hi {
            return lo;
        }
        let width = (hi as i128 - lo as i128 + 1) as u128;
        // Multiply-shift (Lemire) avoids the modulo bias of `% width` for
        // all practical widths.
        let pick = ((self.next_u64() as u128 * width) >> 64) as i128;
        (lo as i128 + pick) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values_of_splitmix64() {
        // First outputs for seed 1234567, from the reference C code.
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert_eq!(r.next_u64(), 9817491932198370423);
    }

    #[test]
    fn ranges_are_closed_and_respected() {
        let mut r = SplitMix64::new(7);
        let mut seen = [false; 4];
        for _ in 0..1000 {
            let k = r.int_in(-1, 2);
            assert!((-1..=2).contains(&k));
            seen[(k + 1) as usize] = true;
            let x = r.real_in(-2.0, 0.5);
            assert!((-2.0..=0.5).contains(&x));
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(r.real_in(3.0, 3.0), 3.0);
        // The full range must not overflow.
        let _ = r.int_in(i64::MIN, i64::MAX);
    }
}
