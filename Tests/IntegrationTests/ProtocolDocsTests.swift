import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// docs/protocol.md's shell and Python examples run as written against a real daemon, in the
/// environment where they used to fail: no `XDG_RUNTIME_DIR` and no `TRANSFERD_SOCKET` (a root
/// shell after `su -`, a container). The daemon then listens on its default socket, which is made
/// private to the test by a mount namespace (`unshare`) with its own /run/user; without one
/// (not root), the daemon's socket is named by `TRANSFERD_SOCKET` instead.
@Suite("docs/protocol.md examples")
struct ProtocolDocsTests {
    static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/protocol.md").standardized

    /// The fenced code blocks of the document, in order: their language and text.
    static func codeBlocks() throws -> [(language: String, text: String)] {
        let text = try String(contentsOf: document, encoding: .utf8)
        var blocks: [(String, String)] = []
        var current: (language: String, lines: [String])?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let block = current {
                    blocks.append((block.language, block.lines.joined(separator: "\n") + "\n"))
                    current = nil
                } else {
                    current = (String(line.dropFirst(3)), [])
                }
            } else if current != nil {
                current?.lines.append(String(line))
            }
        }
        return blocks
    }

    /// The first block in `language` that contains `marker`.
    static func block(_ language: String, containing marker: String) throws -> String {
        try #require(try codeBlocks().first { $0.language == language && $0.text.contains(marker) }?.text, "no \(language) block with \(marker)")
    }

    @Test func theExamplesNeverBuildTheSocketPathThemselves() throws {
        for (language, text) in try Self.codeBlocks() where ["sh", "bash", "python"].contains(language) {
            #expect(!text.contains("XDG_RUNTIME_DIR"), "a \(language) example builds the socket path itself:\n\(text)")
        }
    }

    @Test func theShellAndPythonExamplesRunWithoutXDGRuntimeDir() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 24, size: 256 << 10)
        for name in ["py.bin", "sh.bin", "last.bin"] { server.serve("/" + name, content: content) }

        let directory = daemon.directory
        let preamble = try Self.block("sh", containing: "S=$(transferctl socket-path)")
        let version = try Self.block("sh", containing: #""method":"version""#)
        try (preamble + version).write(toFile: directory + "/version.sh", atomically: true, encoding: .utf8)
        try Self.block("python", containing: "nightly.py submit").write(toFile: directory + "/nightly.py", atomically: true, encoding: .utf8)
        try Self.block("bash", containing: "nightly.sh submit").write(toFile: directory + "/nightly.sh", atomically: true, encoding: .utf8)
        // The last example fetches an example URL: the same, from the test's server.
        let last = try Self.block("python", containing: "def call(method, params=None")
            .replacingOccurrences(of: "https://example.com/file.tar.gz", with: server.url("/last.bin"))
            .replacingOccurrences(of: "/tmp/file.tar.gz", with: daemon.destination("last.bin"))
        try last.write(toFile: directory + "/last.py", atomically: true, encoding: .utf8)

        let isolated = getuid() == 0 && runQuietly("/usr/bin/unshare", ["--mount", "--propagation", "private", "true"]) == 0
        let script = """
            set -eu
            export PATH="$BIN:$PATH"
            unset XDG_RUNTIME_DIR
            if [ "$ISOLATED" = yes ]; then
                unset TRANSFERD_SOCKET
                mount -t tmpfs transferd-docs /run/user
                transferd --state-dir "$DIR/state" --config "$DIR/transferd.json" 2>>"$DIR/transferd.log" &
            else
                export TRANSFERD_SOCKET="$DIR/transferd.sock"
                transferd --state-dir "$DIR/state" --config "$DIR/transferd.json" 2>>"$DIR/transferd.log" &
            fi
            DAEMON=$!
            trap 'kill -9 $DAEMON 2>/dev/null || true' EXIT
            tries=0
            until transferctl socket-path >/dev/null 2>&1; do
                tries=$((tries + 1)); [ $tries -lt 600 ] || { echo "transferd did not start" >&2; exit 9; }
                sleep 0.1
            done
            echo "== socket $(transferctl socket-path)"
            echo "== version"; bash "$DIR/version.sh"
            echo "== nightly.py"
            python3 "$DIR/nightly.py" submit "$URL/py.bin" "$DIR/out/py.bin"
            transferctl status --json | python3 -c 'import json,sys; [print(json.loads(l)["id"]) for l in sys.stdin]' | xargs transferctl wait >/dev/null
            python3 "$DIR/nightly.py" collect
            echo "== nightly.sh"
            bash "$DIR/nightly.sh" submit "$URL/sh.bin" "$DIR/out/sh.bin"
            transferctl status --json | python3 -c 'import json,sys; [print(json.loads(l)["id"]) for l in sys.stdin]' | xargs transferctl wait >/dev/null
            bash "$DIR/nightly.sh" collect
            echo "== last.py"; python3 "$DIR/last.py"
            """
        try script.write(toFile: directory + "/run.sh", atomically: true, encoding: .utf8)
        var environment = TestDaemon.environment([
            "BIN": Binaries.directory, "DIR": directory, "URL": String(server.url("/").dropLast()), "ISOLATED": isolated ? "yes" : "no",
        ])
        environment.removeValue(forKey: "XDG_RUNTIME_DIR")
        let runEnvironment = environment
        let command = isolated ? ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/bash", directory + "/run.sh"] : ["/bin/bash", directory + "/run.sh"]
        let run = try await offTheTestThreads { try runProcess(command[0], Array(command.dropFirst()), environment: runEnvironment) }
        let output = run.stdout
        #expect(run.status == 0, "\(output)\n\(run.stderr)\n\(daemon.log)")
        if isolated {
            #expect(output.contains("== socket /run/user/0/transferd/transferd.sock"), "the default socket without XDG_RUNTIME_DIR: \(output)")
        }
        #expect(output.contains(#""protocol":1"#), "\(output)")
        #expect(output.contains("ok     \(directory)/out/py.bin"), "nightly.py collected the download: \(output)")
        #expect(output.contains("completed \(directory)/out/sh.bin"), "nightly.sh collected the download: \(output)")
        #expect(output.contains("acknowledged"), "\(output)")
        #expect(output.contains("\nnightly-file "), "last.py submitted its job and read its state: \(output)")
        #expect(try sha256Hex(ofFile: daemon.destination("py.bin")) == content.sha256Hex())
        try await server.shutdown()
    }
}
