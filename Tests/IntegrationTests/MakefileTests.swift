import Foundation
import Testing

/// The Makefile's promises to an administrator: `sudo make install` installs what `make build`
/// made and never builds (under sudo, swift is rarely on the PATH).
@Suite("Makefile")
struct MakefileTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized.path

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/make"), "needs make"))
    func installWithoutBuiltBinariesSaysToBuildFirstAndBuildsNothing() async throws {
        let stage = "/tmp/td-make-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: stage) }
        // A swift that fails loudly: install must not call it.
        let run = try await offTheTestThreads {
            try runProcess("/usr/bin/make", [
                "-C", Self.repository, "--no-print-directory", "install", "DESTDIR=\(stage)", "RELEASE_BIN=\(stage)/no-binaries",
                "GENERATED=\(stage)/no-generated", "SWIFT=/bin/false",
            ])
        }
        #expect(run.status != 0)
        #expect(run.stderr.contains("is missing: run 'make build' first"), "\(run.stdout)\n\(run.stderr)")
        #expect(!run.stdout.contains("/bin/false") && !run.stdout.contains("build -c release"), "\(run.stdout)")
        #expect(!FileManager.default.fileExists(atPath: stage + "/usr"), "nothing was installed")
    }
}
