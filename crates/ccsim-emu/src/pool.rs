//! Packet buffers: one contiguous slab of fixed-size slots and a free list, so the steady
//! state allocates nothing per packet. The slab doubles if it runs out (counted in `growths`).

pub struct Pool {
    slot: usize,
    data: Vec<u8>,
    free: Vec<u32>,
    pub growths: u32,
}

impl Pool {
    pub fn new(slot: usize, slots: usize) -> Pool {
        let slots = slots.max(1);
        Pool { slot, data: vec![0; slot * slots], free: (0..slots as u32).rev().collect(), growths: 0 }
    }

    pub fn slot_size(&self) -> usize {
        self.slot
    }

    pub fn capacity(&self) -> usize {
        self.data.len() / self.slot
    }

    pub fn get(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        let old = self.capacity();
        self.data.resize(2 * old * self.slot, 0);
        self.free.extend((old as u32 + 1..2 * old as u32).rev());
        self.growths += 1;
        old as u32
    }

    pub fn put(&mut self, i: u32) {
        self.free.push(i);
    }

    pub fn buf_mut(&mut self, i: u32) -> &mut [u8] {
        let s = i as usize * self.slot;
        &mut self.data[s..s + self.slot]
    }

    pub fn buf(&self, i: u32, len: usize) -> &[u8] {
        let s = i as usize * self.slot;
        &self.data[s..s + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_slots_and_grows_when_empty() {
        let mut p = Pool::new(16, 2);
        let a = p.get();
        let b = p.get();
        assert_ne!(a, b);
        p.buf_mut(a)[0] = 7;
        let c = p.get(); // grows to 4 slots
        assert_eq!((p.growths, p.capacity()), (1, 4));
        assert_eq!(p.buf(a, 1), &[7]);
        p.put(c);
        assert_eq!(p.get(), c);
        let d = p.get();
        assert!(![a, b, c].contains(&d));
        assert_eq!(p.growths, 1);
    }
}
