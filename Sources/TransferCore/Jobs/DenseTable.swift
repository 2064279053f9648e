/// A dictionary by job id whose values live in one dense array: its hash table holds only each
/// id and a 4-byte slot.
///
/// A `Dictionary` keeps between a quarter and five eighths of its buckets free, and each bucket
/// takes a whole key and value. With a value of 64 to 88 bytes (a finished job's summary, a queued
/// job's light form) that room is most of what a million jobs take; here a free bucket costs 20
/// bytes. A removal moves the last entry into the hole, so the order is arbitrary, as a
/// dictionary's.
struct DenseTable<Value>: Sequence {
    typealias Element = (key: String, value: Value)

    private var slots: [String: UInt32] = [:]
    private var entries: ContiguousArray<Element> = []

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    subscript(id: String) -> Value? {
        get { slots[id].map { entries[Int($0)].value } }
        set {
            if let newValue {
                updateValue(newValue, forKey: id)
            } else {
                removeValue(forKey: id)
            }
        }
    }

    mutating func updateValue(_ value: Value, forKey id: String) {
        // One lookup: a new id (most inserts) is hashed once.
        if let slot = slots.updateValue(UInt32(entries.count), forKey: id) {
            slots[id] = slot
            entries[Int(slot)].value = value
        } else {
            entries.append((id, value))
        }
    }

    @discardableResult
    mutating func removeValue(forKey id: String) -> Value? {
        guard let slot = slots.removeValue(forKey: id).map(Int.init) else { return nil }
        let last = entries.count - 1
        if slot != last {
            entries.swapAt(slot, last)
            slots[entries[slot].key] = UInt32(slot)
        }
        return entries.removeLast().value
    }

    mutating func reserveCapacity(_ count: Int) {
        slots.reserveCapacity(count)
        entries.reserveCapacity(count)
    }

    func makeIterator() -> ContiguousArray<Element>.Iterator { entries.makeIterator() }
}

extension DenseTable: Sendable where Value: Sendable {}
