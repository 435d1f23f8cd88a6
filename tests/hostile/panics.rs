// SPDX-License-Identifier: MIT
// panics.rs - Rust: 4 threads catch_unwind frequent panics between slices
// of computation (rust_hot), with the panic message hook silenced.
use std::panic;
use std::thread;

#[inline(never)]
fn rust_hot(n: u64) -> u64 {
    let mut x: u64 = 1;
    for i in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i ^ (x >> 17));
    }
    unsafe { std::ptr::read_volatile(&x) }
}

// A value with a destructor in every frame: unwinding runs each frame's
// landing pad, which ends in _Unwind_Resume.
struct Guard(Vec<u64>);

impl Drop for Guard {
    fn drop(&mut self) {
        unsafe { std::ptr::write_volatile(&mut self.0[0], 0) };
    }
}

#[inline(never)]
fn deep(n: u32, i: u64) -> u64 {
    let _g = Guard(vec![i; 4]);
    if n == 0 {
        panic!("boom {}", i);
    }
    let r = deep(n - 1, i);
    unsafe { std::ptr::read_volatile(&r) + 1 }
}

fn main() {
    panic::set_hook(Box::new(|_| {}));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            thread::spawn(|| {
                let mut caught = 0u64;
                for i in 0..25000u64 {
                    rust_hot(50);
                    if panic::catch_unwind(|| deep((i % 12) as u32, i)).is_err() {
                        caught += 1;
                    }
                }
                caught
            })
        })
        .collect();
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    println!("caught {}", total);
}
