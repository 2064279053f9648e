extension Journal {
    /// A live key as the index holds it. A job's record (`job/<id>`) is held by its id alone: a
    /// generated id is 15 characters, which Swift keeps inline, so the index of a million jobs
    /// holds no string on the heap for them. Any other key is held whole behind a `/`, which no
    /// job key's id starts with, so two keys are never held alike.
    struct IndexKey: Hashable, Sendable {
        private static let jobPrefix = "job/"

        /// The id of a job key, or `/` and the whole key.
        private let stored: String

        init(_ key: String) {
            var key = key
            self = key.withUTF8 { IndexKey(utf8: UnsafeRawBufferPointer($0)) }
        }

        /// The key whose UTF-8 bytes are `utf8` (start-up reads them from the mapped journal).
        init(utf8: UnsafeRawBufferPointer) {
            if utf8.starts(with: Self.jobPrefix.utf8), utf8.dropFirst(4).first != UInt8(ascii: "/") {
                stored = String(decoding: utf8.dropFirst(4), as: UTF8.self)
            } else {
                stored = "/" + String(decoding: utf8, as: UTF8.self)
            }
        }

        /// Whether the key is a job's, held by its id.
        private var isJob: Bool { stored.utf8.first != UInt8(ascii: "/") }

        /// The key as records and callers spell it.
        var key: String { isJob ? Self.jobPrefix + stored : String(Substring(stored.utf8.dropFirst())) }

        /// The id of a job key (`job/<id>`), sharing the index's string; nil for any other key.
        var jobID: String? { isJob ? stored : nil }

        /// The length of `key` in bytes.
        var keyLength: Int { isJob ? stored.utf8.count + 4 : stored.utf8.count - 1 }
    }
}
