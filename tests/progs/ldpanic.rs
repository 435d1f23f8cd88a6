use std::panic;
use std::thread;
#[inline(never)]
fn deep(n: u32, j: u64) -> u64 {
    let v = vec![j; 4];
    if n == 0 { if j % 2 == 0 { panic!("x"); } return v[0]; }
    deep(n - 1, j) + v[1]
}
fn main() {
    panic::set_hook(Box::new(|_| {}));
    let hs: Vec<_> = (0..4).map(|i| thread::spawn(move || {
        let mut c = 0u64;
        for j in 0..300000u64 {
            let r = panic::catch_unwind(|| deep(5, j ^ i));
            if r.is_err() { c += 1; }
        }
        c
    })).collect();
    let t: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    println!("{}", t);
}
