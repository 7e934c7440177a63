//! Huge pages for a transform's large result.
//!
//! A transform along a strided axis writes its result a few cache lines per row, every row
//! on another 4 KB page (a 4096 × 2049 complex128 result's rows are 64 KB apart), so each
//! block of lanes walks thousands of pages: the walk is TLB-bound, and the first touch of
//! each page is a fault. NumPy asks the kernel for transparent huge pages on every array of
//! 4 MB or more (`madvise(MADV_HUGEPAGE)`, used where `/sys/kernel/mm/transparent_hugepage`
//! says `madvise`); the same advice on the result's buffer, before its first write, makes
//! it 2 MB pages: 512 times fewer TLB entries and faults. It is advice: where the kernel has
//! no huge pages it changes nothing, and a failure is ignored.

/// Below this many bytes a buffer is left alone (NumPy's threshold).
const MIN_BYTES: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// Advises huge pages for the whole 2 MB pages inside `buf`'s allocation, which should not
/// have been written yet (pages already faulted in stay small until the kernel merges them).
pub(super) fn advise_huge_pages<T>(buf: &mut [T]) {
    let bytes = std::mem::size_of_val(buf);
    if bytes < MIN_BYTES {
        return;
    }
    let start = buf.as_mut_ptr() as usize;
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: the range lies inside `buf`, memory this process owns and borrows mutably
        // here; `MADV_HUGEPAGE` changes how the kernel backs it, never its contents.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Advice on buffers below and above the threshold, aligned or not, leaves their values.
    #[test]
    fn advice_keeps_the_values() {
        for len in [0, 7, (MIN_BYTES / 8) + 3, 3 * HUGE_PAGE / 8 + 5] {
            let mut v: Vec<f64> = (0..len).map(|i| i as f64).collect();
            advise_huge_pages(&mut v[len.min(1)..]);
            assert!(v.iter().enumerate().all(|(i, x)| *x == i as f64), "{len}");
        }
    }
}
