//! A pipeline of boxed closures applied lazily through iterator adapters.

pub enum Stage {
    Map(Box<dyn Fn(i64) -> i64>),
    Filter(Box<dyn Fn(&i64) -> bool>),
}

pub struct Pipeline {
    stages: Vec<Stage>,
}

impl Pipeline {
    pub fn new() -> Self {
        Pipeline { stages: Vec::new() }
    }

    pub fn stage(mut self, s: Stage) -> Self {
        self.stages.push(s);
        self
    }

    /// run returns an iterator; nothing is computed until it is consumed.
    pub fn run<'a, I>(&'a self, input: I) -> impl Iterator<Item = i64> + 'a
    where
        I: IntoIterator<Item = i64> + 'a,
    {
        input.into_iter().filter_map(move |x| self.apply(x))
    }

    #[inline]
    fn apply(&self, mut x: i64) -> Option<i64> {
        for s in &self.stages {
            match s {
                Stage::Map(f) => x = f(x),
                Stage::Filter(p) => {
                    if !p(&x) {
                        return None;
                    }
                }
            }
        }
        Some(x)
    }
}
