//! Uniform [0, 1) float64 from eight interleaved Xoshiro256++ generators.
//!
//! Why: one Xoshiro256++ is a serial chain of about a dozen integer operations per value,
//! ~1.5 ns here; `(rand + rand).sum()` spent two thirds of its time in it. Eight independent
//! generators stepped side by side are eight lanes of the same operations: one AVX-512 or
//! two AVX2 registers per state word, written with intrinsics (the compiler left the scalar
//! lanes unvectorized), the widest the CPU has chosen at run time; other CPUs step the same
//! lanes in scalar code.
//!
//! The contract (README, "rand"): element `i` of a chunk is the `(i / 8)`-th output of lane
//! `i % 8`; lane `j`'s four state words are outputs `4j .. 4j + 4` of SplitMix64 seeded with
//! the chunk's seed, so lane 0 is exactly `Xoshiro256PlusPlus::seed_from_u64(seed)`. An
//! output `r` becomes `(r >> 11) * 2^-53`. Values depend only on the seed and the position,
//! never on the block sizes a stream is read in, nor on the CPU.

use rand::{RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;

/// Generators per stream: one AVX-512 register of 64-bit words.
pub const LANES: usize = 8;

const F64_UNIT: f64 = 1.0 / (1u64 << 53) as f64;

type State = [[u64; LANES]; 4];

/// A stream of uniform values; read it in blocks of any size.
#[derive(Clone)]
pub struct Uniform {
    /// Word-major: `s[w][j]` is word `w` of lane `j`, so a word of all lanes is one vector.
    s: State,
    /// The last step's values, of which `pending[used..]` are not handed out yet.
    pending: [f64; LANES],
    used: usize,
}

impl Uniform {
    pub fn new(seed: u64) -> Uniform {
        Uniform::for_values(seed, usize::MAX)
    }

    /// A stream that will be read for `n` values only: the lanes those never reach stay
    /// unseeded (a one-element chunk seeds one lane, as the scalar generator did).
    pub fn for_values(seed: u64, n: usize) -> Uniform {
        let mut splitmix = SplitMix64::seed_from_u64(seed);
        let mut s = [[0; LANES]; 4];
        for lane in 0..LANES.min(n) {
            for word in &mut s {
                word[lane] = splitmix.next_u64();
            }
        }
        Uniform {
            s,
            pending: [0.0; LANES],
            used: LANES,
        }
    }

    /// Writes the next `dst.len()` values.
    pub fn fill(&mut self, dst: &mut [f64]) {
        let from_pending = (LANES - self.used).min(dst.len());
        dst[..from_pending].copy_from_slice(&self.pending[self.used..self.used + from_pending]);
        self.used += from_pending;
        let rest = &mut dst[from_pending..];
        let whole = rest.len() / LANES * LANES;
        let (groups, tail) = rest.split_at_mut(whole);
        fill_groups(&mut self.s, groups);
        if !tail.is_empty() {
            step(&mut self.s, &mut self.pending);
            tail.copy_from_slice(&self.pending[..tail.len()]);
            self.used = tail.len();
        }
    }
}

/// One step of every lane: `out[j]` is lane `j`'s next value.
#[inline(always)]
fn step(s: &mut State, out: &mut [f64; LANES]) {
    for j in 0..LANES {
        let r = s[0][j]
            .wrapping_add(s[3][j])
            .rotate_left(23)
            .wrapping_add(s[0][j]);
        let t = s[1][j] << 17;
        s[2][j] ^= s[0][j];
        s[3][j] ^= s[1][j];
        s[1][j] ^= s[2][j];
        s[0][j] ^= s[3][j];
        s[2][j] ^= t;
        s[3][j] = s[3][j].rotate_left(45);
        out[j] = (r >> 11) as f64 * F64_UNIT;
    }
}

/// Fills `dst` (a multiple of [`LANES`] long) with the next steps, the state held in
/// registers for the loop: the portable version, for CPUs without AVX2.
fn fill_groups_scalar(s: &mut State, dst: &mut [f64]) {
    let mut local = *s;
    for group in dst.chunks_exact_mut(LANES) {
        let out: &mut [f64; LANES] = group.try_into().expect("a whole group");
        step(&mut local, out);
    }
    *s = local;
}

#[cfg(target_arch = "x86_64")]
fn fill_groups(s: &mut State, dst: &mut [f64]) {
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512dq")
    {
        // SAFETY: the CPU has the features the function is compiled for.
        unsafe { x86::fill_groups_avx512(s, dst) }
    } else if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: as above.
        unsafe { x86::fill_groups_avx2(s, dst) }
    } else {
        fill_groups_scalar(s, dst)
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn fill_groups(s: &mut State, dst: &mut [f64]) {
    fill_groups_scalar(s, dst)
}

/// [`step`] in vector registers (the compiler does not vectorize the scalar lanes itself).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{State, F64_UNIT, LANES};
    use std::arch::x86_64::*;

    /// One register per state word.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn fill_groups_avx512(s: &mut State, dst: &mut [f64]) {
        let mut w: [__m512i; 4] = [_mm512_setzero_si512(); 4];
        for (reg, word) in w.iter_mut().zip(s.iter()) {
            // SAFETY: `word` is LANES (8) u64s, one 512-bit register.
            *reg = unsafe { _mm512_loadu_si512(word.as_ptr().cast()) };
        }
        let [mut s0, mut s1, mut s2, mut s3] = w;
        let unit = _mm512_set1_pd(F64_UNIT);
        for group in dst.chunks_exact_mut(LANES) {
            let r = _mm512_add_epi64(_mm512_rol_epi64::<23>(_mm512_add_epi64(s0, s3)), s0);
            let t = _mm512_slli_epi64::<17>(s1);
            s2 = _mm512_xor_si512(s2, s0);
            s3 = _mm512_xor_si512(s3, s1);
            s1 = _mm512_xor_si512(s1, s2);
            s0 = _mm512_xor_si512(s0, s3);
            s2 = _mm512_xor_si512(s2, t);
            s3 = _mm512_rol_epi64::<45>(s3);
            let v = _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_srli_epi64::<11>(r)), unit);
            // SAFETY: `group` is LANES (8) f64s, one 512-bit register.
            unsafe { _mm512_storeu_pd(group.as_mut_ptr(), v) };
        }
        for (word, reg) in s.iter_mut().zip([s0, s1, s2, s3]) {
            // SAFETY: `word` is LANES (8) u64s, one 512-bit register.
            unsafe { _mm512_storeu_si512(word.as_mut_ptr().cast(), reg) };
        }
    }

    /// Two registers per state word. AVX2 has no 64-bit rotate and no conversion from
    /// integers to float64, so `(r >> 11) * 2^-53` is made exactly from bits: the top 52
    /// bits as the mantissa of a number in [1, 2), minus 1, plus 2^-53 when the 53rd is set.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn fill_groups_avx2(s: &mut State, dst: &mut [f64]) {
        const HALF: usize = LANES / 2;
        let mut w = [[_mm256_setzero_si256(); 2]; 4];
        for (regs, word) in w.iter_mut().zip(s.iter()) {
            for (h, reg) in regs.iter_mut().enumerate() {
                // SAFETY: `word[h * HALF..]` holds at least HALF (4) u64s, one 256-bit register.
                *reg = unsafe { _mm256_loadu_si256(word[h * HALF..].as_ptr().cast()) };
            }
        }
        let one_bits = _mm256_set1_epi64x(1.0f64.to_bits() as i64);
        let low_bit = _mm256_set1_epi64x(1);
        let half_ulp = _mm256_set1_epi64x(F64_UNIT.to_bits() as i64);
        let one = _mm256_set1_pd(1.0);
        for group in dst.chunks_exact_mut(LANES) {
            for h in 0..2 {
                let [s0, s1, s2, s3] = [w[0][h], w[1][h], w[2][h], w[3][h]];
                let sum = _mm256_add_epi64(s0, s3);
                let rot =
                    _mm256_or_si256(_mm256_slli_epi64::<23>(sum), _mm256_srli_epi64::<41>(sum));
                let r = _mm256_add_epi64(rot, s0);
                let t = _mm256_slli_epi64::<17>(s1);
                let s2 = _mm256_xor_si256(s2, s0);
                let s3 = _mm256_xor_si256(s3, s1);
                let s1 = _mm256_xor_si256(s1, s2);
                let s0 = _mm256_xor_si256(s0, s3);
                let s2 = _mm256_xor_si256(s2, t);
                let s3 = _mm256_or_si256(_mm256_slli_epi64::<45>(s3), _mm256_srli_epi64::<19>(s3));
                [w[0][h], w[1][h], w[2][h], w[3][h]] = [s0, s1, s2, s3];
                let top = _mm256_or_si256(_mm256_srli_epi64::<12>(r), one_bits);
                let high = _mm256_sub_pd(_mm256_castsi256_pd(top), one);
                let bit = _mm256_and_si256(_mm256_srli_epi64::<11>(r), low_bit);
                let low = _mm256_sub_epi64(_mm256_setzero_si256(), bit);
                let low = _mm256_castsi256_pd(_mm256_and_si256(low, half_ulp));
                // SAFETY: `group[h * HALF..]` holds at least HALF (4) f64s.
                unsafe {
                    _mm256_storeu_pd(group[h * HALF..].as_mut_ptr(), _mm256_add_pd(high, low))
                };
            }
        }
        for (word, regs) in s.iter_mut().zip(w) {
            for (h, reg) in regs.into_iter().enumerate() {
                // SAFETY: `word[h * HALF..]` holds at least HALF (4) u64s.
                unsafe { _mm256_storeu_si256(word[h * HALF..].as_mut_ptr().cast(), reg) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// The contract, written with the scalar generator of `rand_xoshiro`.
    fn by_the_contract(seed: u64, n: usize) -> Vec<f64> {
        let mut splitmix = SplitMix64::seed_from_u64(seed);
        let mut lanes: Vec<Xoshiro256PlusPlus> = (0..LANES)
            .map(|_| Xoshiro256PlusPlus::from_rng(&mut splitmix).unwrap())
            .collect();
        (0..n)
            .map(|i| (lanes[i % LANES].next_u64() >> 11) as f64 / (1u64 << 53) as f64)
            .collect()
    }

    #[test]
    fn lane_zero_is_the_seeded_scalar_generator() {
        let mut scalar = Xoshiro256PlusPlus::seed_from_u64(42);
        let mut stream = Uniform::new(42);
        let mut got = vec![0.0; 8 * LANES];
        stream.fill(&mut got);
        for v in got.iter().step_by(LANES) {
            assert_eq!(
                v.to_bits(),
                ((scalar.next_u64() >> 11) as f64 * F64_UNIT).to_bits()
            );
        }
    }

    /// Every block size, boundaries falling anywhere, gives the contract's values bit for bit.
    #[test]
    fn blocks_of_any_size_give_the_contracts_values() {
        for seed in [0, 1, 7, u64::MAX] {
            let want = by_the_contract(seed, 1000);
            for block in [1, 3, 7, 8, 9, 64, 333, 1000] {
                let mut stream = Uniform::new(seed);
                let mut got = vec![0.0; want.len()];
                for part in got.chunks_mut(block) {
                    stream.fill(part);
                }
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "seed {seed}, blocks of {block}");
                assert!(got.iter().all(|v| (0.0..1.0).contains(v)));
            }
            for n in [1, 5, 8, 9] {
                let mut got = vec![0.0; n];
                Uniform::for_values(seed, n).fill(&mut got);
                assert_eq!(got, want[..n], "seed {seed}, {n} values");
            }
        }
    }

    /// Each vector path the CPU has gives the portable path's values.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vector_paths_equal_the_scalar_lanes() {
        let start = Uniform::new(11).s;
        let mut want_state = start;
        let mut want = vec![0.0; 64 * LANES];
        fill_groups_scalar(&mut want_state, &mut want);
        let check = |f: unsafe fn(&mut State, &mut [f64]), name: &str| {
            let mut state = start;
            let mut got = vec![0.0; want.len()];
            // SAFETY: called only when the CPU has the function's features.
            unsafe { f(&mut state, &mut got) };
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{name}"
            );
            assert_eq!(state, want_state, "{name}");
        };
        if std::arch::is_x86_feature_detected!("avx2") {
            check(x86::fill_groups_avx2, "avx2");
        }
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
        {
            check(x86::fill_groups_avx512, "avx512");
        }
    }

    #[test]
    fn values_look_uniform() {
        let mut v = vec![0.0; 1 << 20];
        Uniform::new(3).fill(&mut v);
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let below_tenth = v.iter().filter(|x| **x < 0.1).count() as f64 / v.len() as f64;
        assert!((mean - 0.5).abs() < 0.002, "mean {mean}");
        assert!((below_tenth - 0.1).abs() < 0.002, "{below_tenth}");
    }
}
