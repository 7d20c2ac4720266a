//! Connection ids: a slab index and a generation, so an id that outlives its connection
//! never reaches the connection that reuses the slot. Ids cross to JS as doubles, so they
//! fit in 53 bits: 22 index bits and a 31-bit generation.

const INDEX_BITS: u32 = 22;
/// The slot index bits of an id, for JS's table of sockets by id.
pub const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;
/// The largest generation: an id is below 2^53, exact as a JS number.
const GEN_MAX: u32 = (1 << (53 - INDEX_BITS)) - 1;

struct Slot<T> {
    gen: u32,
    item: Option<T>,
}

pub struct Slots<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

pub fn make_id(index: u32, gen: u32) -> u64 {
    ((gen as u64) << INDEX_BITS) | index as u64
}

/// The slab index of an id (what the poll token carries).
pub fn index_of(id: u64) -> usize {
    (id & ((1 << INDEX_BITS) - 1)) as usize
}

/// The generation after `gen`, wrapping within 1..=GEN_MAX.
fn next_gen(gen: u32) -> u32 {
    if gen >= GEN_MAX {
        1
    } else {
        gen + 1
    }
}

fn gen_of(id: u64) -> u32 {
    (id >> INDEX_BITS) as u32
}

impl<T> Slots<T> {
    /// The id the next `insert` will use, or None when the slab is full.
    pub fn vacant_id(&mut self) -> Option<u64> {
        let index = match self.free.last() {
            Some(&i) => i as usize,
            None => {
                if self.slots.len() >= (1 << INDEX_BITS) {
                    return None;
                }
                self.slots.push(Slot { gen: 1, item: None });
                self.free.push((self.slots.len() - 1) as u32);
                self.slots.len() - 1
            }
        };
        Some(make_id(index as u32, self.slots[index].gen))
    }

    /// Fills the slot `vacant_id` returned.
    pub fn insert(&mut self, id: u64, item: T) {
        let i = index_of(id);
        if self.free.last() == Some(&(i as u32)) && self.slots[i].gen == gen_of(id) {
            self.free.pop();
            self.slots[i].item = Some(item);
        }
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        let slot = self.slots.get_mut(index_of(id))?;
        if slot.gen != gen_of(id) {
            return None;
        }
        slot.item.as_mut()
    }

    pub fn get(&self, id: u64) -> Option<&T> {
        let slot = self.slots.get(index_of(id))?;
        if slot.gen != gen_of(id) {
            return None;
        }
        slot.item.as_ref()
    }

    /// Empties the slot; the id (and every copy of it) stops matching.
    pub fn remove(&mut self, id: u64) -> Option<T> {
        let i = index_of(id);
        let slot = self.slots.get_mut(i)?;
        if slot.gen != gen_of(id) {
            return None;
        }
        let item = slot.item.take()?;
        slot.gen = next_gen(slot.gen);
        self.free.push(i as u32);
        Some(item)
    }

    /// The current id of the item at slab index `index`.
    pub fn id_at(&self, index: usize) -> Option<u64> {
        let slot = self.slots.get(index)?;
        slot.item.as_ref()?;
        Some(make_id(index as u32, slot.gen))
    }

    pub fn iter(&self) -> impl Iterator<Item = (u64, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.item.as_ref().map(|t| (make_id(i as u32, s.gen), t)))
    }

    pub fn ids(&self) -> Vec<u64> {
        self.iter().map(|(id, _)| id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_ids_do_not_match() {
        let mut s: Slots<&str> = Slots::default();
        let a = s.vacant_id().unwrap();
        s.insert(a, "a");
        assert_eq!(s.get_mut(a).copied(), Some("a"));
        assert_eq!(s.remove(a), Some("a"));
        let b = s.vacant_id().unwrap();
        s.insert(b, "b");
        assert_eq!(index_of(a), index_of(b));
        assert_ne!(a, b);
        assert!(s.get_mut(a).is_none());
        assert!(s.remove(a).is_none());
        assert_eq!(s.id_at(index_of(b)), Some(b));
        assert_eq!(s.ids(), vec![b]);
    }

    /// Ids cross to JS as doubles: every id, at the last generation and the last index too,
    /// is exact below 2^53, and the generation wraps to 1 without matching an old id.
    #[test]
    fn ids_fit_in_a_double() {
        let mut s: Slots<u8> = Slots::default();
        let a = s.vacant_id().unwrap();
        s.slots[0].gen = GEN_MAX;
        let top = s.vacant_id().unwrap();
        assert_ne!(a, top);
        s.insert(top, 1);
        assert!(top < 1 << 53);
        assert_eq!(top as f64 as u64, top);
        assert_eq!(make_id((1 << INDEX_BITS) - 1, GEN_MAX), (1 << 53) - 1);
        assert_eq!(s.remove(top), Some(1));
        let next = s.vacant_id().unwrap();
        assert_eq!(gen_of(next), 1);
        assert_eq!(index_of(next), 0);
        s.insert(next, 2);
        assert!(s.get(top).is_none());
        assert_eq!(s.get(next), Some(&2));
    }
}
