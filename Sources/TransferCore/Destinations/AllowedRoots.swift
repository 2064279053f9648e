/// The directories downloads may land in (`allowed_roots`), and where an administrator changes
/// them, for messages.
///
/// A root itself is opened as configured, so it may be a symbolic link an administrator made;
/// below it nothing is followed.
public struct AllowedRoots: Sendable, Equatable, CustomStringConvertible {
    /// Absolute paths without `.`, `..`, empty components or a trailing slash.
    public let paths: [String]
    /// Where the roots are set, as a message tells a user to change them:
    /// "allowed_roots in /etc/transferd/transferd.json".
    public let setting: String

    /// The roots `paths`, each normalized. Entries that `normalize` refuses are left out: check
    /// them with it first to report them.
    public init(_ paths: [String], setting: String = "allowed_roots in /etc/transferd/transferd.json") {
        var normalized: [String] = []
        for path in paths {
            guard let root = Self.normalize(path) else { continue }
            if !normalized.contains(root) { normalized.append(root) }
        }
        self.paths = normalized
        self.setting = setting
    }

    /// The whole file system, still without following symbolic links below `/`. For embedding and
    /// tests; the daemon always configures its roots.
    public static let everywhere = AllowedRoots(["/"], setting: "allowed_roots")

    /// `path` without empty components or a trailing slash; nil when it is not absolute or holds
    /// `.`, `..` or a NUL byte.
    public static func normalize(_ path: String) -> String? {
        guard path.hasPrefix("/"), !path.utf8.contains(0) else { return nil }
        let components = path.split(separator: "/")
        guard !components.contains(where: { $0 == "." || $0 == ".." }) else { return nil }
        return "/" + components.joined(separator: "/")
    }

    public var description: String { paths.joined(separator: ", ") }

    /// The innermost root that holds `components` (a path split at `/`, without empty parts) below
    /// it, with the number of components it covers; nil when none does.
    func root(holding components: [Substring]) -> (path: String, depth: Int)? {
        var best: (path: String, depth: Int)?
        for root in paths {
            let rootComponents = root.split(separator: "/")
            guard rootComponents.count < components.count,
                zip(rootComponents, components).allSatisfy({ $0 == $1 })
            else { continue }
            if rootComponents.count >= (best?.depth ?? -1) { best = (root, rootComponents.count) }
        }
        return best
    }
}
