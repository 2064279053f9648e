import Foundation
import Logging
import Testing
import TransferProtocol
@testable import TransferCore

/// What keeps a finished file from its destination: its size or digest, a partial file that was
/// replaced, an existing destination without overwrite.
@Suite("Landing refusals")
struct LandingTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    func partialFile(in directory: TemporaryDirectory, bytes: [UInt8]) throws -> (PartialFile, TransferRequest) {
        let request = TransferRequest(
            jobID: "j", url: URL(string: "http://example.test/f")!, headers: [:], destination: directory.file("f"),
            partialPath: directory.file(".f.j.part"), overwrite: false, allowedRoots: AllowedRoots([directory.path]), logger: logger)
        guard case .success(let prepared) = TransferPreparation.prepare(request, suspended: nil) else {
            throw ScriptTimeout(what: "a partial file")
        }
        try bytes.withUnsafeBytes { try FileIO.writeAll(prepared.file.fd, $0, path: prepared.file.path) }
        return (prepared.file, request)
    }

    @Test func aFileOfTheExpectedSizeAndDigestLands() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (file, request) = try partialFile(in: directory, bytes: [1, 2, 3])
        var digest = FileDigest()
        [UInt8]([1, 2, 3]).withUnsafeBytes { digest.update($0) }
        #expect(Landing.verify(file: file, bytes: 3, sha256: digest.sha256Hex, digest: digest, announced: nil, request: request) == nil)
        #expect(Landing.refusal(file: file, request: request) == nil)
        try Landing.moveIntoPlace(file, named: "f", overwrite: false)
        #expect(FileManager.default.contents(atPath: directory.file("f")) == Data([1, 2, 3]))
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func anotherSizeOrDigestThanExpectedIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var (file, request) = try partialFile(in: directory, bytes: [1, 2, 3])
        let digest = FileDigest()
        request.expectedSize = 4
        #expect(Landing.verify(file: file, bytes: 3, sha256: digest.sha256Hex, digest: digest, announced: nil, request: request)?.code == .sizeMismatch)
        request.expectedSize = nil
        request.expectedSha256 = String(repeating: "a", count: 64)
        #expect(Landing.verify(file: file, bytes: 3, sha256: digest.sha256Hex, digest: digest, announced: nil, request: request)?.code == .digestMismatch)
        request.expectedSha256 = nil
        let announced = AnnouncedDigest(algorithm: .sha256, hex: String(repeating: "b", count: 64), header: "Repr-Digest")
        let refusal = Landing.verify(file: file, bytes: 3, sha256: digest.sha256Hex, digest: digest, announced: announced, request: request)
        #expect(refusal?.code == .digestMismatch && refusal?.message.contains("Repr-Digest") == true)
    }

    @Test func aPartialFileReplacedWhileTheDownloadRanIsNotMoved() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (file, request) = try partialFile(in: directory, bytes: [1])
        try FileManager.default.removeItem(atPath: file.path)
        _ = FileManager.default.createFile(atPath: file.path, contents: Data([9]))
        #expect(Landing.refusal(file: file, request: request)?.code == .disk)
    }

    @Test func anExistingDestinationIsLeftAloneWithoutOverwrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (file, _) = try partialFile(in: directory, bytes: [1])
        _ = FileManager.default.createFile(atPath: directory.file("f"), contents: Data([7]))
        #expect(throws: FileIOError.self) { try Landing.moveIntoPlace(file, named: "f", overwrite: false) }
        #expect(FileManager.default.contents(atPath: directory.file("f")) == Data([7]))
        try Landing.moveIntoPlace(file, named: "f", overwrite: true)
        #expect(FileManager.default.contents(atPath: directory.file("f")) == Data([1]))
    }
}
