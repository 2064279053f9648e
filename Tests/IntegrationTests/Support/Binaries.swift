import Foundation

/// Paths of the built `transferd` and `transferctl`, which sit beside the test bundle.
enum Binaries {
    static let directory: String = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // Inside `<name>.xctest/...` on some layouts: walk up to the products directory.
        while url.path.contains(".xctest") { url.deleteLastPathComponent() }
        return url.path
    }()

    static var transferd: String { directory + "/transferd" }
    static var transferctl: String { directory + "/transferctl" }
    static var transferkitProbe: String { directory + "/transferkit-probe" }
}
