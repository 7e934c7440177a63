//! Tuning of mimalloc, the allocator of the `ares` binary and of the Python module (each
//! declares it as its `#[global_allocator]`; a library must not choose one for its users).
//!
//! Chunks are large, short-lived buffers allocated from slot threads; mimalloc keeps them in
//! reusable pages where glibc maps and unmaps each one (half the kernel benchmark's time went
//! to page faults before). But mimalloc returns freed pages to the OS after 10 ms, so the next
//! pass or chunk faults them in again (preparing 10^6 chunks took 3x longer). One second keeps
//! memory in use across passes and subtasks and still returns it soon after a job ends.

/// `mi_option_purge_delay` in mimalloc's option enum (not exported by libmimalloc-sys).
const MI_OPTION_PURGE_DELAY: i32 = 15;
/// mimalloc's default purge delay, used to check that the enum value above is right.
const MI_DEFAULT_PURGE_DELAY: i64 = 10;

/// Sets mimalloc's purge delay to one second, unless `MIMALLOC_PURGE_DELAY` chose another.
/// Only meaningful in a process whose global allocator is mimalloc.
pub fn tune_mimalloc() {
    // SAFETY: plain option getters/setters of the C allocator; no pointers involved.
    unsafe {
        if libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) as i64 == MI_DEFAULT_PURGE_DELAY {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000);
        }
    }
}

/// Returns the pages mimalloc keeps freed for its purge delay to the OS now, program-wide
/// (a forced `mi_collect`: the calling thread's heap and every arena's delayed purges). The
/// worker process's memory monitor calls it above the spill threshold, where resident
/// bytes matter more than faulting pages in again.
pub fn return_freed_pages() {
    // SAFETY: a collection request to the C allocator; no pointers involved.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
