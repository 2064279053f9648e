import Foundation

/// Makes a destination absolute, as the daemon requires, against the current directory.
enum AbsolutePath {
    /// `path` unchanged when absolute; else joined to `currentDirectory` and cleaned
    /// lexically (`.` and empty components dropped, `..` removes its parent), keeping a
    /// trailing slash so the daemon still sees a directory was meant.
    static func resolve(_ path: String, currentDirectory: String) -> String {
        if path.hasPrefix("/") { return path }
        var components: [Substring] = []
        for component in (currentDirectory + "/" + path).split(separator: "/") {
            switch component {
            case ".": continue
            case "..": _ = components.popLast()
            default: components.append(component)
            }
        }
        let joined = "/" + components.joined(separator: "/")
        return path.hasSuffix("/") && joined != "/" ? joined + "/" : joined
    }

    /// `path` made absolute against the process's current directory.
    static func resolve(_ path: String) throws(TransferCtlError) -> String {
        if path.hasPrefix("/") { return path }
        let currentDirectory = FileManager.default.currentDirectoryPath
        guard currentDirectory.hasPrefix("/") else {
            throw .usage(
                "transferctl: cannot tell the current directory to make \(path) absolute; give DEST as an absolute path")
        }
        return resolve(path, currentDirectory: currentDirectory)
    }
}
