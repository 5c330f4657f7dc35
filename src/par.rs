//! Running independent pieces of work on the machine's cores.
//!
//! Only for work whose pieces share nothing mutable: each piece reads
//! shared data and returns a value, and the values come back in the order
//! of the pieces, so the result does not depend on how many threads ran or
//! which piece finished first. Outputs stay byte-identical to a
//! sequential run.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The passes recurse over statement lists and expression trees; a worker
/// gets the same stack as the command line's main worker (`src/main.rs`).
const WORKER_STACK_BYTES: usize = 1 << 30;

/// Below this many pieces, starting threads costs more than it saves.
const MIN_PIECES: usize = 2;

/// `f` applied to each item, in the items' order, spread over the
/// available cores. When no thread can be started (a tight `ulimit`), the
/// calling thread does all the work.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = thread_count().min(items.len());
    if threads < 2 || items.len() < MIN_PIECES {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            done.push((i, f(item)));
        }
        done
    };
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .stack_size(WORKER_STACK_BYTES)
                    .spawn_scoped(scope, work)
                    .ok()
            })
            .collect();
        for (i, r) in work() {
            slots[i] = Some(r);
        }
        for h in helpers {
            // A piece that panicked panics here too, as it would have
            // without threads.
            let done = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            for (i, r) in done {
                slots[i] = Some(r);
            }
        }
    });
    slots
        .into_iter()
        .map(|r| r.expect("every piece was taken by one worker"))
        .collect()
}

/// The cores available, or `AIOLI_THREADS` when it is a positive number
/// (`AIOLI_THREADS=1` runs everything on the calling thread).
fn thread_count() -> usize {
    static COUNT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *COUNT.get_or_init(|| {
        std::env::var("AIOLI_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_order_of_the_items() {
        let items: Vec<u64> = (0..1000).collect();
        // Uneven pieces, so that the workers finish out of order.
        let out = map(&items, |&x| (0..x % 97).fold(x, |acc, k| acc ^ (k * 31)));
        let expected: Vec<u64> = items
            .iter()
            .map(|&x| (0..x % 97).fold(x, |acc, k| acc ^ (k * 31)))
            .collect();
        assert_eq!(out, expected);
    }

    #[test]
    fn no_items_and_one_item_need_no_thread() {
        assert_eq!(map(&[] as &[u8], |&x| x), Vec::<u8>::new());
        assert_eq!(map(&[7u8], |&x| x + 1), vec![8]);
    }
}
