// nightly.rs is compiled by TestLLVMPeer -update (peer_test.go) with a
// nightly rustc and -C symbol-mangling-version=v0, when one is installed, for
// the const generics of types other than integers, bool and char that
// adt_const_params allows: &str, references, arrays, tuples, structs and
// enums. llvm-cxxfilt-14 cannot demangle these names.
#![feature(adt_const_params, unsized_const_params)]
#![allow(incomplete_features)]
use std::marker::ConstParamTy;

#[derive(PartialEq, Eq, ConstParamTy)]
pub struct Pt { x: i32, y: bool }

#[derive(PartialEq, Eq, ConstParamTy)]
pub enum E { A, B(u8), C { v: char } }

#[inline(never)] pub fn s<const S: &'static str>() -> usize { S.len() }
#[inline(never)] pub fn r<const R: &'static u32>() -> u32 { *R }
#[inline(never)] pub fn a<const A: [u8; 3]>() -> u8 { A[1] }
#[inline(never)] pub fn t<const T: (u8, bool, char)>() -> u8 { T.0 }
#[inline(never)] pub fn p<const P: Pt>() -> i32 { P.x }
#[inline(never)] pub fn e<const V: E>() -> u8 { match V { E::A => 0, E::B(b) => b, E::C { .. } => 2 } }
#[inline(never)] pub fn sl<const S: &'static [u16]>() -> usize { S.len() }

fn main() {
    let n = s::<"héllo\n\"'">() + s::<"">() + r::<{ &7 }>() as usize + a::<{ [1, 2, 3] }>() as usize
        + t::<{ (1, true, 'z') }>() as usize + p::<{ Pt { x: -3, y: false } }>() as usize
        + e::<{ E::A }>() as usize + e::<{ E::B(9) }>() as usize + e::<{ E::C { v: 'q' } }>() as usize
        + sl::<{ &[1, 2] }>();
    println!("{n}");
}
