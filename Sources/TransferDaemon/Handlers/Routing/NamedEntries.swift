/// One entry of a configuration object of named entries (`hooks`, `rate_windows`): its name, its
/// fields, and how to say what is wrong with it.
struct NamedEntry {
    var name: String
    var fields: [String: Any]
    /// "`key`.`name` in `file`: `detail`".
    var problem: (String) -> ConfigurationError

    /// The entries of `value`, in name order. `value` must be an object of named objects (else
    /// "`key` in `file` must be `shape`"), each an object (else "`entryShape`") with no field
    /// outside `fields`.
    static func parse(
        _ value: Any, key: String, file: String, shape: String, entryShape: String, fields known: Set<String>
    ) throws -> [NamedEntry] {
        guard let object = value as? [String: Any] else {
            throw ConfigurationError(description: "\(key) in \(file) must be \(shape)")
        }
        return try object.keys.sorted().map { name in
            let problem = { (detail: String) in ConfigurationError(description: "\(key).\(name) in \(file): \(detail)") }
            guard let fields = object[name] as? [String: Any] else { throw problem(entryShape) }
            if let unknown = Set(fields.keys).subtracting(known).sorted().first {
                throw problem("unknown field '\(unknown)': the fields are \(known.sorted().joined(separator: ", "))")
            }
            return NamedEntry(name: name, fields: fields, problem: problem)
        }
    }
}
