import Foundation

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init(_ name: String = #function) throws {
        let base = FileManager.default.temporaryDirectory.path
        let safe = name.filter { $0.isLetter || $0.isNumber }
        path = "\(base)/transferd-tests-\(safe)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String { path + "/" + name }
}
