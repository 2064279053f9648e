/// A response's `Content-Encoding`, as the coding of the bytes the file holds.
enum ContentCoding {
    /// The coding named by `header`, lowercased and without spaces; nil for none or `identity`.
    static func named(_ header: String?) -> String? {
        guard let header else { return nil }
        let coding = header.lowercased().filter { !$0.isWhitespace }
        return coding.isEmpty || coding == "identity" ? nil : String(coding.prefix(64))
    }
}
