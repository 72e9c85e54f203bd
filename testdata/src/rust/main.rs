//! The Rust fixture: generics, traits and trait objects, closures, iterator
//! chains that opt-level 2 inlines heavily, #[inline(always)] and
//! #[inline(never)] helpers, and a panic that is caught. Built directly with
//! rustc (no cargo): see testdata/src/README.md.

mod geometry;
mod pipeline;

use std::collections::BTreeMap;
use std::env;
use std::fmt;

use geometry::{Circle, Polygon, Shape};
use pipeline::{Pipeline, Stage};

/// Celsius is a newtype with operator and formatting impls.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
struct Celsius(f64);

impl std::ops::Add for Celsius {
    type Output = Celsius;

    fn add(self, other: Celsius) -> Celsius {
        Celsius(self.0 + other.0)
    }
}

impl fmt::Display for Celsius {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.1}C", self.0)
    }
}

/// Summary is generic over anything that can be summed and compared.
struct Summary<T> {
    items: Vec<T>,
}

impl<T> Summary<T>
where
    T: Copy + PartialOrd + std::ops::Add<Output = T>,
{
    fn new() -> Self {
        Summary { items: Vec::new() }
    }

    fn push(&mut self, v: T) -> &mut Self {
        self.items.push(v);
        self
    }

    fn total(&self, zero: T) -> T {
        self.items.iter().copied().fold(zero, |a, b| a + b)
    }

    fn max(&self) -> Option<T> {
        let mut it = self.items.iter().copied();
        let first = it.next()?;
        Some(it.fold(first, |a, b| if b > a { b } else { a }))
    }
}

#[inline(always)]
fn mix(a: u64, b: u64) -> u64 {
    (a ^ b).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17)
}

#[inline(always)]
fn mix3(a: u64, b: u64, c: u64) -> u64 {
    mix(mix(a, b), c)
}

#[inline(never)]
fn checksum(words: &[&str]) -> u64 {
    words
        .iter()
        .enumerate()
        .map(|(i, w)| mix3(i as u64, w.len() as u64, w.bytes().map(u64::from).sum()))
        .fold(0, mix)
}

#[inline(never)]
fn histogram(text: &str) -> BTreeMap<char, usize> {
    let mut h = BTreeMap::new();
    for c in text.chars().filter(|c| c.is_alphabetic()).map(|c| c.to_ascii_lowercase()) {
        *h.entry(c).or_insert(0) += 1;
    }
    h
}

#[inline(never)]
fn divide(a: i64, b: i64) -> i64 {
    if b == 0 {
        panic!("divide: {} by zero", a);
    }
    a / b
}

fn collatz_len(mut n: u64) -> usize {
    let mut steps = 0;
    while n != 1 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps
}

fn recurse(depth: u32, acc: u64) -> u64 {
    if depth == 0 {
        return acc;
    }
    recurse(depth - 1, mix(acc, depth as u64)) | 1
}

fn main() {
    let args: Vec<String> = env::args().collect();
    let n = args.len() as u64;

    let shapes: Vec<Box<dyn Shape>> = vec![
        Box::new(Circle::new(1.0 + n as f64)),
        Box::new(Polygon::square(2.0)),
        Box::new(Polygon::regular(6, 1.5)),
    ];
    let area: f64 = shapes.iter().map(|s| s.area()).sum();
    let names: Vec<String> = shapes.iter().map(|s| s.describe()).collect();
    let biggest = geometry::largest(&shapes).map(|s| s.name()).unwrap_or("none");

    let mut temps = Summary::new();
    temps.push(Celsius(21.5)).push(Celsius(-3.0)).push(Celsius(n as f64));
    let mut ints = Summary::new();
    for i in 0..10 + n {
        ints.push(i * i);
    }

    let offset = n as i64;
    let pipeline = Pipeline::new()
        .stage(Stage::Map(Box::new(move |x| x * 3 + offset)))
        .stage(Stage::Filter(Box::new(|x| x % 2 == 0)))
        .stage(Stage::Map(Box::new(|x| x - 1)));
    let piped: Vec<i64> = pipeline.run(0..20).collect();

    let text = args.join(" ") + " The quick brown fox jumps over the lazy dog";
    let hist = histogram(&text);
    let words: Vec<&str> = text.split_whitespace().collect();
    let longest_collatz = (1..200 + n).max_by_key(|&k| collatz_len(k)).unwrap_or(1);

    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(|| divide(10, n as i64 - 1)).is_err();
    let ok = divide(100, n as i64);

    println!(
        "rust fixture: {:.2} {} {} {} {:?} {} {} {} {} {} {} {}",
        area,
        names.join("|"),
        biggest,
        temps.total(Celsius(0.0)),
        temps.max(),
        ints.total(0),
        piped.iter().sum::<i64>(),
        hist.len(),
        checksum(&words) & 0xffff,
        longest_collatz,
        caught,
        ok + recurse(8, n) as i64 % 7,
    );
}
