//! Shapes behind a trait, used both statically (generics) and through trait
//! objects (dynamic dispatch).

use std::f64::consts::PI;

pub trait Shape {
    fn area(&self) -> f64;
    fn name(&self) -> &'static str;

    /// A provided method: every implementation shares this body.
    fn describe(&self) -> String {
        format!("{} of area {:.2}", self.name(), self.area())
    }
}

pub struct Circle {
    radius: f64,
}

impl Circle {
    pub fn new(radius: f64) -> Self {
        Circle { radius }
    }
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        PI * self.radius * self.radius
    }

    fn name(&self) -> &'static str {
        "circle"
    }
}

pub struct Polygon {
    sides: u32,
    side: f64,
}

impl Polygon {
    pub fn square(side: f64) -> Self {
        Polygon { sides: 4, side }
    }

    pub fn regular(sides: u32, side: f64) -> Self {
        assert!(sides >= 3, "a polygon needs at least 3 sides, got {}", sides);
        Polygon { sides, side }
    }

    #[inline(never)]
    fn apothem(&self) -> f64 {
        self.side / (2.0 * (PI / self.sides as f64).tan())
    }
}

impl Shape for Polygon {
    fn area(&self) -> f64 {
        self.sides as f64 * self.side * self.apothem() / 2.0
    }

    fn name(&self) -> &'static str {
        match self.sides {
            3 => "triangle",
            4 => "square",
            5 => "pentagon",
            6 => "hexagon",
            _ => "polygon",
        }
    }
}

/// largest is generic over the container's element type.
pub fn largest<S: AsRef<dyn Shape>>(shapes: &[S]) -> Option<&dyn Shape> {
    shapes
        .iter()
        .map(|s| s.as_ref())
        .max_by(|a, b| a.area().partial_cmp(&b.area()).unwrap_or(std::cmp::Ordering::Equal))
}
