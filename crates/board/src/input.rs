//! Console input: a byte queue that host threads fill and the emulated
//! devices drain without ever blocking.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Bytes typed at a console, shared between the threads that produce them
/// (e.g. one reading host stdin) and the device that consumes them. Cloning
/// gives another handle on the same queue.
#[derive(Clone, Debug, Default)]
pub struct InputQueue(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    ready: Condvar,
    /// `state.bytes.len()`, kept under the lock: the device polls the queue
    /// on every hart turn, and an empty queue (nearly always) then costs no
    /// lock.
    queued: AtomicUsize,
}

#[derive(Debug, Default)]
struct State {
    bytes: VecDeque<u8>,
    closed: bool,
}

impl InputQueue {
    /// An empty, open queue.
    pub fn new() -> InputQueue {
        InputQueue::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panicking producer leaves the bytes consistent: keep using them.
        self.0.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends bytes and wakes a [`InputQueue::wait`].
    pub fn push(&self, bytes: &[u8]) {
        let mut s = self.state();
        s.bytes.extend(bytes);
        self.0.queued.store(s.bytes.len(), Ordering::Release);
        drop(s);
        self.0.ready.notify_all();
    }

    /// The bytes queued, left in the queue (a checkpoint saves them).
    pub fn queued_bytes(&self) -> Vec<u8> {
        self.state().bytes.iter().copied().collect()
    }

    /// Marks the end of input (host stdin reached EOF); bytes already queued
    /// stay readable.
    pub fn close(&self) {
        self.state().closed = true;
        self.0.ready.notify_all();
    }

    /// Whether [`InputQueue::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.state().closed
    }

    /// Whether no byte is queued.
    pub fn is_empty(&self) -> bool {
        self.0.queued.load(Ordering::Acquire) == 0
    }

    /// Puts `bytes` back in front of the queue (they were taken but not
    /// consumed).
    pub fn unread(&self, bytes: &[u8]) {
        let mut s = self.state();
        for &b in bytes.iter().rev() {
            s.bytes.push_front(b);
        }
        self.0.queued.store(s.bytes.len(), Ordering::Release);
    }

    /// Takes up to `max` bytes, never blocking.
    pub fn pop(&self, max: usize) -> Vec<u8> {
        if self.is_empty() || max == 0 {
            return Vec::new();
        }
        let mut s = self.state();
        let n = max.min(s.bytes.len());
        let out = s.bytes.drain(..n).collect();
        self.0.queued.store(s.bytes.len(), Ordering::Release);
        out
    }

    /// Blocks until a byte is queued, the queue is closed or `timeout`
    /// passes; whether a byte is queued. For an emulator whose harts all
    /// wait for an interrupt with no timer armed.
    pub fn wait(&self, timeout: Duration) -> bool {
        let s = self.state();
        let (s, _) = self
            .0
            .ready
            .wait_timeout_while(s, timeout, |s| s.bytes.is_empty() && !s.closed)
            .unwrap_or_else(|e| e.into_inner());
        !s.bytes.is_empty()
    }

    /// Starts a thread that copies `reader` (e.g. host stdin) into the queue
    /// until end of file or an error, then closes the queue.
    pub fn spawn_reader<R: Read + Send + 'static>(&self, mut reader: R) -> JoinHandle<()> {
        let q = self.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 256];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => q.push(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            q.close();
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_thread_fills_and_closes() {
        let q = InputQueue::new();
        q.spawn_reader(&b"hello"[..]).join().unwrap();
        assert!(q.is_closed());
        assert!(q.wait(Duration::ZERO));
        assert_eq!(q.pop(3), b"hel");
        assert_eq!(q.pop(10), b"lo");
        assert!(q.is_empty());
        assert!(!q.wait(Duration::from_millis(1)));
    }

    #[test]
    fn wait_wakes_on_push_from_another_thread() {
        let q = InputQueue::new();
        let producer = q.clone();
        let t = std::thread::spawn(move || producer.push(b"x"));
        assert!(q.wait(Duration::from_secs(10)));
        t.join().unwrap();
        assert_eq!(q.pop(1), b"x");
    }
}
