//! Transparent huge pages for every large buffer, as NumPy asks for them.
//!
//! A chunk is written once, right after it is allocated: an 80 MB chunk in 4 KB pages is
//! 20,000 page faults, each a trap, a page cleared and (on a virtual machine) often a trap
//! of the hypervisor's too. NumPy advises the kernel to back every array of 4 MB or more
//! with 2 MB pages (`madvise(MADV_HUGEPAGE)`, which takes effect where
//! `/sys/kernel/mm/transparent_hugepage/enabled` says `madvise`, as on Debian): 512 times
//! fewer faults and TLB entries. Without it, dask's chunks (NumPy arrays) were faulted in
//! 2 MB at a time and ares' in 4 KB, and on this project's VM ares' system time for the
//! 1.6 GB matrix of `svd_compressed` was up to three times dask's. A transform along a
//! strided axis also walks thousands of pages per block of lanes: huge pages make that walk
//! stop missing the TLB.
//!
//! [`HugePageAlloc`] wraps a global allocator and gives the advice on each allocation of
//! [`MIN_BYTES`] or more, before anything is written to it; the `ares` binary, the Python
//! module and the benchmarks install it over mimalloc (or the system allocator). It is
//! advice: where the kernel has no huge pages it changes nothing, and a failure is ignored.
//! `ARES_MADVISE_HUGEPAGE=0` in the environment turns it off (NumPy's
//! `NUMPY_MADVISE_HUGEPAGE=0`), for a machine where huge pages hurt and for A/B measurements.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU8, Ordering};

/// Whether to advise: 0 not read yet, 1 yes, 2 no (`ARES_MADVISE_HUGEPAGE=0`).
static ADVISE: AtomicU8 = AtomicU8::new(0);

/// Reads `ARES_MADVISE_HUGEPAGE` once, with `getenv` (an allocator may not allocate).
fn enabled() -> bool {
    match ADVISE.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            // SAFETY: a NUL-terminated name; the value is only read, before any use of it
            // could be invalidated by this thread.
            let off = unsafe {
                let v = libc::getenv(c"ARES_MADVISE_HUGEPAGE".as_ptr());
                !v.is_null() && std::ffi::CStr::from_ptr(v).to_bytes() == b"0"
            };
            ADVISE.store(if off { 2 } else { 1 }, Ordering::Relaxed);
            !off
        }
    }
}

/// Below this many bytes a buffer is left alone (NumPy's threshold).
pub const MIN_BYTES: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// Advises huge pages for the whole 2 MB pages inside `bytes` bytes from `start` (memory the
/// caller owns, best not written yet: pages already faulted in stay small until the kernel
/// merges them).
fn advise(start: *mut u8, bytes: usize) {
    if bytes < MIN_BYTES || !enabled() {
        return;
    }
    let first = (start as usize).next_multiple_of(HUGE_PAGE);
    let end = (start as usize + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: the range lies inside an allocation the caller owns; `MADV_HUGEPAGE`
        // changes how the kernel backs it, never its contents.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

/// Advises huge pages for `buf`, a buffer of this process (see [`advise`]).
pub fn advise_huge_pages<T>(buf: &mut [T]) {
    advise(buf.as_mut_ptr().cast(), std::mem::size_of_val(buf));
}

/// A global allocator that asks for huge pages under every allocation of [`MIN_BYTES`] or
/// more, the allocation itself left to `A`.
pub struct HugePageAlloc<A>(pub A);

// SAFETY: every call is `A`'s own; the advice only changes how pages are backed.
unsafe impl<A: GlobalAlloc> GlobalAlloc for HugePageAlloc<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on unchanged.
        let p = unsafe { self.0.alloc(layout) };
        if !p.is_null() {
            advise(p, layout.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // Fresh memory from the OS is zero without being written: the advice still counts.
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on unchanged.
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if !p.is_null() {
            advise(p, layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `A` through this wrapper, with this layout.
        unsafe { self.0.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `A` through this wrapper; the caller's contract for
        // `realloc`, passed on unchanged.
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !p.is_null() && new_size > layout.size() {
            advise(p, new_size);
        }
        p
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

    /// Allocations through the wrapper, small and large, zeroed and grown, hold what they
    /// should.
    #[test]
    fn the_wrapper_allocates_as_its_allocator_does() {
        let a = HugePageAlloc(std::alloc::System);
        for size in [8, MIN_BYTES, 3 * MIN_BYTES + 8] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            // SAFETY: every pointer comes from `a` with the layout it is used with, and is
            // read within the bytes allocated.
            unsafe {
                let z = a.alloc_zeroed(layout);
                assert!(std::slice::from_raw_parts(z, size).iter().all(|b| *b == 0));
                z.write_bytes(7, size);
                let grown = a.realloc(z, layout, 2 * size);
                assert!(std::slice::from_raw_parts(grown, size)
                    .iter()
                    .all(|b| *b == 7));
                a.dealloc(grown, Layout::from_size_align(2 * size, 8).unwrap());
            }
        }
    }
}
