#if canImport(Glibc)
import Glibc
#endif

/// A destination checked as a string, before the disk is asked anything: absolute, free of NUL
/// bytes, `.` and `..`, within the length limits, naming a file, and inside an allowed root.
struct DestinationPath: Sendable, Equatable {
    /// The path as given.
    let path: String
    /// The innermost allowed root holding it.
    let root: String
    /// The directories between the root and the file, in order.
    let directories: [String]
    /// The file name.
    let name: String

    /// The longest file name most Linux file systems take (NAME_MAX).
    static let maxNameBytes = 255

    /// The directory the file lands in, for messages.
    var directory: String { Self.join(root, directories) }

    /// The directory reached after the first `count` directories below the root, for messages.
    func prefix(_ count: Int) -> String { Self.join(root, Array(directories.prefix(count))) }

    /// Checks `path` against the rules that need no disk and finds its root.
    static func parse(_ path: String, roots: AllowedRoots) throws(DestinationError) -> DestinationPath {
        let shown = path.count > 200 ? path.prefix(200) + "…" : Substring(path)
        guard path.hasPrefix("/") else {
            throw DestinationError(.form, "destination '\(shown)' is not an absolute path: give the full path, starting with /")
        }
        guard !path.utf8.contains(0) else {
            throw DestinationError(.form, "destination contains a NUL byte: give a path without NUL bytes")
        }
        guard path.utf8.count < PATH_MAX else {
            throw DestinationError(
                .form, "destination is \(path.utf8.count) bytes long, over the \(PATH_MAX - 1)-byte limit for a path (PATH_MAX): choose a shorter path")
        }
        guard !path.hasSuffix("/") else {
            throw DestinationError(.form, "destination '\(shown)' names a directory: add the file name")
        }
        let components = path.split(separator: "/")
        for component in components {
            guard component != "..", component != "." else {
                throw DestinationError(
                    .form, "destination '\(shown)' contains '\(component)': give a path without . or .. components (transferd does not resolve them)")
            }
            guard component.utf8.count <= maxNameBytes else {
                throw DestinationError(
                    .form,
                    "destination '\(path.prefix(100))…' has a component of \(component.utf8.count) bytes, over the \(maxNameBytes)-byte "
                        + "limit for a file name (NAME_MAX): choose shorter names")
            }
        }
        guard !roots.paths.contains("/" + components.joined(separator: "/")) else {
            throw DestinationError(.form, "destination '\(shown)' is an allowed root, a directory: add the file name")
        }
        guard let name = components.last, let (root, depth) = roots.root(holding: components) else {
            throw DestinationError(
                .outsideRoots,
                "destination \(shown) is outside the allowed roots (\(roots)): choose a path under one of them, "
                    + "or add its directory to \(roots.setting)")
        }
        return DestinationPath(
            path: path, root: root, directories: components[depth..<(components.count - 1)].map(String.init), name: String(name))
    }

    private static func join(_ root: String, _ directories: [String]) -> String {
        guard !directories.isEmpty else { return root }
        return (root == "/" ? "" : root) + "/" + directories.joined(separator: "/")
    }
}
