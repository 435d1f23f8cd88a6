mod calc {
    #[inline(never)]
    pub fn churn(n: u64) -> u64 {
        let mut v = 1u64;
        for i in 0..n { v = v.wrapping_mul(6364136223846793005).wrapping_add(i); }
        v
    }
    #[inline(never)]
    pub fn spin(n: u64) -> u64 {
        let mut v = 7u64;
        for i in 0..n { v = v.rotate_left(5) ^ i; }
        v
    }
}
fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(300) * 1_000_000;
    let a = calc::churn(n);
    let b = calc::spin(n / 3);
    println!("{} {}", a, b);
}
