/// One part of a `multipart/form-data` upload (`form` in `submit`), as curl's `-F`: a text field
/// (`name` and `value`), or the part that carries the upload's file (`file: true`). Parts are
/// sent in the order given; exactly one carries the file.
public struct FormPart: Codable, Hashable, Sendable {
    /// The field's name.
    public var name: String
    /// A text field's value (absent for the file's part).
    public var value: String?
    /// Whether this part carries the upload's file.
    public var file: Bool?
    /// The file name the file's part declares (default: the source's last path component).
    public var filename: String?
    /// The part's `Content-Type` (default for the file: `application/octet-stream`; text fields
    /// send none).
    public var contentType: String?

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    public init(fileNamed name: String, filename: String? = nil, contentType: String? = nil) {
        self.name = name
        self.file = true
        self.filename = filename
        self.contentType = contentType
    }

    /// Whether this part carries the file.
    public var carriesFile: Bool { file == true }
}
