//! The process's allocator: the C library's for a command about one skill,
//! mimalloc for a command over every skill.
//!
//! mimalloc is the faster allocator for bulk work: parsing builds many
//! small values, and with glibc's malloc `validate -j 2` over 10,000 skills
//! takes 1.2–1.4× as long (its arenas also contend between the worker
//! threads). But it keeps each size of block in pages of its own, so a
//! short command touches more fresh memory: `show` took 392 page faults
//! with it against 271 with glibc's, and 5–15% longer (medians, several
//! sessions). A command starts on
//! the C library's allocator; [`bulk`] switches new allocations to mimalloc
//! for good. A block is always freed (or grown) by the allocator that gave
//! it. Before the switch every block is the C library's. After it, the
//! C library's blocks are the few made before (or grown from them), whose
//! addresses lie between the lowest and highest it ever gave; a block
//! outside those bounds is mimalloc's, and one inside them is looked up in
//! mimalloc's map of its segments (`mi_is_in_heap_region`). Freeing costs
//! bulk work two comparisons more.
//!
//! mimalloc is built without transparent huge pages (`no_thp`): with them,
//! the peak RSS of `export` over 10,000 skills was 38 MiB instead of
//! 16 MiB. See benches/README.md.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mimalloc::MiMalloc;

/// Do new allocations go to mimalloc?
static BULK: AtomicBool = AtomicBool::new(false);

/// From now on, allocate with mimalloc (for a command over every skill).
pub fn bulk() {
    BULK.store(true, Ordering::Relaxed);
}

/// The lowest and highest address (end excluded) of any block the C
/// library's allocator gave.
static SYSTEM_LOW: AtomicUsize = AtomicUsize::new(usize::MAX);
static SYSTEM_HIGH: AtomicUsize = AtomicUsize::new(0);

pub struct Alloc;

/// Counts a block of the C library's allocator in the bounds.
fn system_block(ptr: *mut u8, size: usize) -> *mut u8 {
    if !ptr.is_null() {
        let at = ptr as usize;
        SYSTEM_LOW.fetch_min(at, Ordering::Relaxed);
        SYSTEM_HIGH.fetch_max(at.saturating_add(size), Ordering::Relaxed);
    }
    ptr
}

/// Did mimalloc give `ptr`?
fn mimallocs(ptr: *mut u8) -> bool {
    if !BULK.load(Ordering::Relaxed) {
        return false;
    }
    let at = ptr as usize;
    if at < SYSTEM_LOW.load(Ordering::Relaxed) || at >= SYSTEM_HIGH.load(Ordering::Relaxed) {
        return true;
    }
    // SAFETY: only looks the address up in mimalloc's own tables.
    unsafe { libmimalloc_sys::mi_is_in_heap_region(ptr.cast()) }
}

// Not inlined: at every allocation and drop of the program, the choice
// between the two allocators made the binary 0.9 MB larger.
//
// SAFETY: each call goes to one of two allocators that uphold
// `GlobalAlloc`'s contract; a block is freed and grown by the one that
// allocated it (mimalloc answers for its own blocks, and never claims an
// address it did not map).
unsafe impl GlobalAlloc for Alloc {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe {
            if BULK.load(Ordering::Relaxed) {
                MiMalloc.alloc(layout)
            } else {
                system_block(System.alloc(layout), layout.size())
            }
        }
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe {
            if BULK.load(Ordering::Relaxed) {
                MiMalloc.alloc_zeroed(layout)
            } else {
                system_block(System.alloc_zeroed(layout), layout.size())
            }
        }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from the allocator it goes back to.
        unsafe {
            if mimallocs(ptr) {
                MiMalloc.dealloc(ptr, layout)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` is grown by the allocator that gave it.
        unsafe {
            if mimallocs(ptr) {
                MiMalloc.realloc(ptr, layout, new_size)
            } else {
                system_block(System.realloc(ptr, layout, new_size), new_size)
            }
        }
    }
}
