//! A stack that lives inline while it is small, and moves to the heap past `N` items: the
//! short texts of tool calls need no allocation for it.

/// Up to `N` items inline; more, all in a vector.
#[derive(Debug)]
pub(super) struct Small<T: Copy + Default, const N: usize> {
    inline: [T; N],
    len: usize,
    heap: Option<Vec<T>>,
}

impl<T: Copy + Default, const N: usize> Default for Small<T, N> {
    fn default() -> Self {
        Small { inline: [T::default(); N], len: 0, heap: None }
    }
}

impl<T: Copy + Default, const N: usize> Small<T, N> {
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.heap.as_ref().map_or(self.len, Vec::len)
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Inlined always (the move to the heap is not): on every value the parser reads.
    #[expect(
        clippy::inline_always,
        reason = "left to the compiler, it is inlined or not as the crate's codegen units fall"
    )]
    #[inline(always)]
    pub(super) fn push(&mut self, item: T) {
        if let Some(heap) = &mut self.heap {
            heap.push(item);
        } else if let Some(slot) = self.inline.get_mut(self.len) {
            *slot = item;
            self.len += 1;
        } else {
            self.spill(item);
        }
    }

    /// The inline items and `item`, moved to the heap.
    #[cold]
    fn spill(&mut self, item: T) {
        let mut heap = Vec::with_capacity(2 * N + 1);
        heap.extend_from_slice(&self.inline);
        heap.push(item);
        self.heap = Some(heap);
    }

    #[cfg(test)]
    pub(super) fn pop(&mut self) -> Option<T> {
        if let Some(heap) = &mut self.heap {
            return heap.pop();
        }
        self.len = self.len.checked_sub(1)?;
        self.inline.get(self.len).copied()
    }

    #[inline]
    pub(super) fn last(&self) -> Option<&T> {
        self.as_slice().last()
    }

    #[cfg(test)]
    pub(super) fn truncate(&mut self, len: usize) {
        match &mut self.heap {
            Some(heap) => heap.truncate(len),
            None => self.len = self.len.min(len),
        }
    }

    pub(super) fn as_slice(&self) -> &[T] {
        match &self.heap {
            Some(heap) => heap,
            None => self.inline.get(..self.len).unwrap_or_default(),
        }
    }

    /// The items from `first` on.
    #[cfg(test)]
    pub(super) fn tail_mut(&mut self, first: usize) -> &mut [T] {
        match &mut self.heap {
            Some(heap) => heap.get_mut(first..).unwrap_or_default(),
            None => self.inline.get_mut(first..self.len).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Small;

    #[test]
    fn behaves_as_a_vector_past_its_inline_room() {
        let mut s: Small<u32, 3> = Small::default();
        let mut v = Vec::new();
        for n in 0..10u32 {
            s.push(n);
            v.push(n);
            assert_eq!(s.as_slice(), v.as_slice());
            if n % 3 == 2 {
                assert_eq!(s.pop(), v.pop());
                s.truncate(n as usize / 2);
                v.truncate(n as usize / 2);
            }
            assert_eq!(s.len(), v.len());
            assert_eq!(s.last(), v.last());
            assert_eq!(s.tail_mut(1).len(), v.len().saturating_sub(1));
        }
        let mut e: Small<u32, 2> = Small::default();
        assert_eq!(e.pop(), None);
        assert!(e.tail_mut(0).is_empty());
    }
}
