import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

/// A form upload's copy: the form's body around the file, replacing the handed-over copy.
@Suite struct SpoolFormTests {
    @Test func theFramedCopyHoldsTheFormAroundTheFileAndReplacesTheOld() throws {
        let (spool, source, bytes) = try SpoolTests.setUp(size: 2 << 20 + 5)
        let handed = try spool.ingest(path: source, owner: 7)
        let form = try MultipartForm(parts: [FormPart(name: "k", value: "v"), FormPart(fileNamed: "file")], defaultFileName: "source", boundary: "B")
        let framed = try spool.frame(handed.name, owner: 7, in: form, source: source)
        let expected = form.prefix + bytes + form.suffix
        #expect(FileManager.default.contents(atPath: spool.path(of: framed.name)) == Data(expected))
        #expect(framed.size == Int64(expected.count))
        #expect(framed.sha256 == (try SpoolTests.sha256Hex(expected)))
        #expect(!FileManager.default.fileExists(atPath: spool.path(of: handed.name)), "the copy of the bare file is freed")
        #expect(spool.bytesHeld(by: 7) == framed.size)
        #expect(throws: CoreError.self) { _ = try spool.frame(framed.name, owner: 8, in: form, source: source) }
    }

    @Test func aFrameTheQuotaCannotHoldKeepsTheHandedOverCopy() throws {
        let (spool, source, _) = try SpoolTests.setUp(size: 600, quota: .init(perUser: 1000, total: 1000))
        let handed = try spool.ingest(path: source, owner: 7)
        let form = try MultipartForm(parts: [FormPart(fileNamed: "file")], defaultFileName: nil, boundary: "B")
        #expect(throws: CoreError.self) { _ = try spool.frame(handed.name, owner: 7, in: form, source: source) }
        #expect(spool.entry(handed.name, owner: 7) != nil, "the copy is still there to submit")
        #expect(spool.bytesHeld(by: 7) == 600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.directory) == [handed.name])
    }
}
