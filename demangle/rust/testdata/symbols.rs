// symbols.rs is compiled by TestLLVMPeer -update (peer_test.go) with
// rustc -C symbol-mangling-version=v0 and =legacy at opt-level 0 and 2, to
// collect the mangled names rustc really emits. Its std symbols come along.
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};

pub trait Shape {
    fn area(&self) -> f64;
    fn name(&self) -> String {
        String::from("shape")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Circle {
    r: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square<T> {
    side: T,
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        3.14159 * self.r * self.r
    }
}

impl<T: Copy + Into<f64>> Shape for Square<T> {
    fn area(&self) -> f64 {
        let s: f64 = self.side.into();
        s * s
    }
    fn name(&self) -> String {
        format!("square {}", self.area())
    }
}

impl fmt::Display for Circle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "circle({})", self.r)
    }
}

pub struct Matrix<const R: usize, const C: usize> {
    cells: [[i64; C]; R],
}

impl<const R: usize, const C: usize> Matrix<R, C> {
    #[inline(never)]
    pub fn trace(&self) -> i64 {
        (0..R.min(C)).map(|i| self.cells[i][i]).sum()
    }
}

#[inline(never)]
pub fn flag<const B: bool>() -> u32 {
    if B { 1 } else { 0 }
}

#[inline(never)]
pub fn letter<const C: char>() -> u32 {
    C as u32
}

#[inline(never)]
pub fn signed<const N: i32>() -> i64 {
    N as i64 * 2
}

#[inline(never)]
pub fn wide<const N: u128>() -> u128 {
    N / 3
}

#[inline(never)]
pub fn tiny<const N: i8>() -> i8 {
    N.wrapping_add(1)
}

#[inline(never)]
pub fn apply_dyn(f: &dyn Fn(i32) -> i32, v: i32) -> i32 {
    f(v)
}

#[inline(never)]
pub fn apply_boxed(fs: Vec<Box<dyn FnMut(&str) -> usize + Send>>) -> usize {
    let mut n = 0;
    for mut f in fs {
        n += f("hello");
    }
    n
}

#[inline(never)]
pub fn generic_sum<I: Iterator<Item = u64>>(it: I) -> u64 {
    it.filter(|x| x % 3 != 0).map(|x| x * 2).sum()
}

#[inline(never)]
pub fn fn_pointer(f: fn(&u8, u16) -> u32, g: unsafe extern "C" fn(*const i8) -> i32) -> u32 {
    f(&1, 2) + if g as usize == 0 { 1 } else { 0 }
}

unsafe extern "C" fn c_callback(_p: *const i8) -> i32 {
    7
}

fn takes_tuple(t: (u8, &str, [u16; 3]), s: &[i32], raw: *mut f32) -> usize {
    t.0 as usize + t.1.len() + t.2.len() + s.len() + raw.is_null() as usize
}

mod outer {
    pub mod inner {
        pub struct Deep<'a, T: ?Sized> {
            pub v: &'a T,
        }
        impl<'a, T: ?Sized + AsRef<str>> Deep<'a, T> {
            #[inline(never)]
            pub fn len(&self) -> usize {
                let f = |s: &str| {
                    let g = move |k: usize| k + s.len();
                    g(1)
                };
                f(self.v.as_ref())
            }
        }
    }
}

#[inline(never)]
fn higher_ranked(f: &dyn for<'a> Fn(&'a str) -> &'a str) -> usize {
    f("abc").len()
}

#[inline(never)]
fn never_returns(code: i32) -> ! {
    std::process::exit(code)
}

#[inline(never)]
fn unicode_ñame() -> u32 {
    42
}

fn main() {
    let shapes: Vec<Box<dyn Shape>> = vec![Box::new(Circle { r: 1.0 }), Box::new(Square { side: 2u8 })];
    let total: f64 = shapes.iter().map(|s| s.area()).sum();
    let names: Vec<String> = shapes.iter().map(|s| s.name()).collect();

    let mut counts: HashMap<String, usize> = HashMap::new();
    for n in &names {
        *counts.entry(n.clone()).or_insert(0) += 1;
    }
    let mut ordered: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    ordered.entry(3).or_default().push("three");
    let set: HashSet<Square<u16>> = (1..5).map(|side| Square { side }).collect();

    let m = Matrix::<2, 3> { cells: [[1, 2, 3], [4, 5, 6]] };
    let consts = flag::<true>() + flag::<false>() + letter::<'x'>() + letter::<'ñ'>() + letter::<'\n'>();
    let neg = signed::<-5>() + signed::<{ i32::MIN }>();
    let big = wide::<{ 1u128 << 100 }>() + wide::<7>();
    let small = tiny::<-128>() as i64 + tiny::<127>() as i64;

    let k = 10;
    let add = move |v: i32| v + k;
    let dynv = apply_dyn(&add, 3) + apply_dyn(&|v| v * 2, 4);
    let boxed = apply_boxed(vec![Box::new(|s: &str| s.len()), Box::new(move |s: &str| s.len() + k as usize)]);
    let gs = generic_sum((0..100u64).rev().skip(3));
    let fp = fn_pointer(|a, b| *a as u32 + b as u32, c_callback);
    let mut fl = 1.5f32;
    let tt = takes_tuple((1, "xy", [1, 2, 3]), &[1, 2], &mut fl as *mut f32);
    let deep = outer::inner::Deep { v: "deep" };
    let shared = Arc::new(Mutex::new(vec![1u8]));
    {
        let s2 = Arc::clone(&shared);
        std::thread::spawn(move || s2.lock().unwrap().push(2)).join().unwrap();
    }
    let hr = higher_ranked(&|s| &s[1..]);
    let text = format!(
        "{total} {:?} {} {} {consts} {neg} {big} {small} {dynv} {boxed} {gs} {fp} {tt} {} {} {hr} {} {}",
        counts,
        ordered.len(),
        set.len(),
        m.trace(),
        deep.len(),
        Circle { r: 2.0 },
        unicode_ñame()
    );
    println!("{text} {:?}", shared.lock().unwrap());
    if text.is_empty() {
        never_returns(3);
    }
}
