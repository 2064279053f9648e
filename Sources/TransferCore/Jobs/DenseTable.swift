/// A dictionary whose entries live in one dense array, found through a hash table of 4-byte
/// slots.
///
/// A `Dictionary` keeps between a quarter and five eighths of its buckets free, and each bucket
/// takes a whole key and value: with a job id and a value of 8 to 88 bytes, that room is most of
/// what a hundred thousand jobs take. Here a bucket is the 4-byte number of an entry (open
/// addressing, linear probing, at most three quarters full), so a free bucket costs 4 bytes. A
/// removal moves the last entry into the hole, so the order is arbitrary, as a dictionary's.
struct DenseTable<Key: Hashable, Value>: Sequence {
    typealias Element = (key: Key, value: Value)

    private var entries: ContiguousArray<Element> = []
    /// Each bucket holds an entry's index plus one; 0 is free. Its count is 0 or a power of two.
    private var buckets: ContiguousArray<UInt32> = []

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    subscript(key: Key) -> Value? {
        get { find(key).slot.map { entries[$0].value } }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Sets the value of `key`; returns the value it replaced.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        var (bucket, slot) = find(key)
        if let slot {
            defer { entries[slot].value = value }
            return entries[slot].value
        }
        // Only a new key may need a larger table; the free bucket is then another one.
        if (entries.count + 1) * 4 > buckets.count * 3 {
            rehash(minimumCount: entries.count + 1)
            bucket = find(key).bucket
        }
        buckets[bucket] = UInt32(entries.count + 1)
        entries.append((key, value))
        return nil
    }

    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        let (bucket, found) = find(key)
        guard let slot = found else { return nil }
        free(bucket)
        let last = entries.count - 1
        if slot != last {
            // The last entry moves into the hole: its bucket points at its new place.
            let moved = bucketHolding(last)
            buckets[moved] = UInt32(slot + 1)
            entries.swapAt(slot, last)
        }
        return entries.removeLast().value
    }

    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
        if count * 4 > buckets.count * 3 { rehash(minimumCount: count) }
    }

    func makeIterator() -> ContiguousArray<Element>.Iterator { entries.makeIterator() }

    // MARK: - The hash table

    private var mask: Int { buckets.count &- 1 }

    private static func home(of key: Key, mask: Int) -> Int { key.hashValue & mask }

    /// The bucket holding `key` and its entry's index, or the free bucket where it would go.
    private func find(_ key: Key) -> (bucket: Int, slot: Int?) {
        guard !buckets.isEmpty else { return (0, nil) }
        let mask = mask
        var bucket = Self.home(of: key, mask: mask)
        while true {
            let held = buckets[bucket]
            if held == 0 { return (bucket, nil) }
            let slot = Int(held) - 1
            if entries[slot].key == key { return (bucket, slot) }
            bucket = (bucket + 1) & mask
        }
    }

    /// The bucket that holds entry `slot`.
    private func bucketHolding(_ slot: Int) -> Int {
        let mask = mask
        var bucket = Self.home(of: entries[slot].key, mask: mask)
        while Int(buckets[bucket]) != slot + 1 { bucket = (bucket + 1) & mask }
        return bucket
    }

    /// Frees `bucket`, moving back the entries after it that probed past it, so that every entry
    /// stays reachable from its home bucket without a gap (no tombstones).
    private mutating func free(_ bucket: Int) {
        let mask = mask
        var hole = bucket
        var next = (bucket + 1) & mask
        while buckets[next] != 0 {
            let home = Self.home(of: entries[Int(buckets[next]) - 1].key, mask: mask)
            // It may fill the hole when its home is not between the hole and itself.
            if (next &- home) & mask >= (next &- hole) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = 0
    }

    /// Makes the table large enough for `minimumCount` entries and places every entry again.
    private mutating func rehash(minimumCount: Int) {
        var size = Swift.max(buckets.count, 16)
        while minimumCount * 4 > size * 3 { size *= 2 }
        buckets = ContiguousArray(repeating: 0, count: size)
        let mask = size - 1
        for slot in entries.indices {
            var bucket = Self.home(of: entries[slot].key, mask: mask)
            while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
            buckets[bucket] = UInt32(slot + 1)
        }
    }
}

extension DenseTable: Sendable where Key: Sendable, Value: Sendable {}
