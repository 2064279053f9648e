public import TransferProtocol

/// A `multipart/form-data` body (RFC 7578) around one file: the bytes before the file and the
/// bytes after it, for the spool to write around its copy. Field names and file names are
/// escaped as browsers escape them (`"` → `%22`, CR → `%0D`, LF → `%0A`).
public struct MultipartForm: Sendable, Equatable {
    /// The most parts a form may have, and the most bytes of names and values in all.
    public static let maxParts = 100
    public static let maxFieldBytes = 64 << 10

    public let boundary: String
    /// Everything up to the file's bytes: the parts before it and the file part's header.
    public let prefix: [UInt8]
    /// Everything after the file's bytes: the parts after it and the closing boundary.
    public let suffix: [UInt8]

    /// The request's `Content-Type`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Checks `parts` and lays them out. `defaultFileName` names the file when its part does not;
    /// `boundary` must appear in no value (a boundary derived from the file's digest never
    /// appears in the file).
    public init(parts: [FormPart], defaultFileName: String?, boundary: String) throws(CoreError) {
        try Self.validate(parts)
        self.boundary = boundary
        var before: [UInt8] = []
        var after: [UInt8] = []
        var seenFile = false
        for part in parts {
            var header = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escape(part.name))\""
            if part.carriesFile {
                let name = part.filename ?? defaultFileName ?? "file"
                header += "; filename=\"\(Self.escape(name))\"\r\nContent-Type: \(part.contentType ?? "application/octet-stream")"
                before += Array((header + "\r\n\r\n").utf8)
                seenFile = true
                continue
            }
            if let type = part.contentType { header += "\r\nContent-Type: \(type)" }
            let value = part.value ?? ""
            if value.contains(boundary) {
                throw CoreError(.invalidParameter("form"), "the value of form field '\(part.name.prefix(60))' holds the form's boundary: it cannot be sent")
            }
            let bytes = Array((header + "\r\n\r\n" + value + "\r\n").utf8)
            if seenFile { after += bytes } else { before += bytes }
        }
        self.prefix = before
        self.suffix = Array("\r\n".utf8) + after + Array("--\(boundary)--\r\n".utf8)
    }

    /// The boundary for a file whose SHA-256 is `sha256Hex`: the same on every submit of the same
    /// file (a repeated submit with the same id then matches), and never inside the file.
    public static func boundary(forFileDigest sha256Hex: String) -> String {
        "transferd-form-" + sha256Hex.prefix(40)
    }

    /// Checks `parts` alone (names, values, exactly one file part, the sizes).
    public static func validate(_ parts: [FormPart]) throws(CoreError) {
        func refuse(_ message: String) -> CoreError { CoreError(.invalidParameter("form"), message) }
        guard !parts.isEmpty, parts.count <= maxParts else {
            throw refuse("form must have 1 to \(maxParts) parts, one of them the file (\"file\": true)")
        }
        let files = parts.filter(\.carriesFile)
        guard files.count == 1 else {
            throw refuse("form must have exactly one part with \"file\": true, the part that carries the file; it has \(files.count)")
        }
        var bytes = 0
        for part in parts {
            guard !part.name.isEmpty, part.name.utf8.count <= 256, !hasControl(part.name) else {
                throw refuse("each form part needs a name of 1 to 256 characters without control characters")
            }
            if part.carriesFile, part.value != nil {
                throw refuse("form part '\(part.name.prefix(60))' carries the file, so it takes no value")
            }
            if !part.carriesFile, part.value == nil {
                throw refuse("form part '\(part.name.prefix(60))' needs a value (or \"file\": true for the part that carries the file)")
            }
            if let filename = part.filename, filename.isEmpty || filename.utf8.count > 256 || hasControl(filename) {
                throw refuse("the file name of form part '\(part.name.prefix(60))' must be 1 to 256 characters without control characters")
            }
            if let type = part.contentType {
                guard !type.isEmpty, type.utf8.count <= 256, type.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) else {
                    throw refuse("the content_type of form part '\(part.name.prefix(60))' must be 1 to 256 printable ASCII characters, such as image/png")
                }
            }
            bytes += part.name.utf8.count + (part.value?.utf8.count ?? 0) + (part.filename?.utf8.count ?? 0)
        }
        guard bytes <= maxFieldBytes else {
            throw refuse("the form's names and values come to \(bytes) bytes, more than the \(maxFieldBytes) a form may carry besides its file")
        }
    }

    private static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }

    private static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
