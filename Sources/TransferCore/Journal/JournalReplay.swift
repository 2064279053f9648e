/// What replaying journal bytes yields: the live keys and where the valid records end.
public struct JournalReplay: Sendable, Equatable {
    /// The latest value of every live key.
    public var live: [String: [UInt8]]
    /// The sequence number of the last valid record; 0 when there is none.
    public var lastSequence: UInt64
    /// How many leading bytes hold valid records: all of them, or those before a torn tail.
    public var validBytes: Int

    public init(live: [String: [UInt8]] = [:], lastSequence: UInt64 = 0, validBytes: Int = 0) {
        self.live = live
        self.lastSequence = lastSequence
        self.validBytes = validBytes
    }
}
