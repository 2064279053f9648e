import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

@Suite("Submit validation")
struct SubmitValidatorTests {
    @Test(arguments: ["ftp://example.com/x", "file:///etc/passwd", "not a url", "http://", "/relative"])
    func refusesURLsThatAreNotHTTP(url: String) {
        #expect(throws: RPCError.self) { try SubmitValidator.validateURL(url) }
    }

    @Test func acceptsHTTPAndHTTPS() throws {
        _ = try SubmitValidator.validateURL("http://127.0.0.1:8080/a")
        _ = try SubmitValidator.validateURL("HTTPS://example.com/a?b=c")
    }

    @Test func refusesRelativeAndDotDestinations() throws {
        for path in ["relative/file", "/tmp/../etc/x", "/tmp/./x", "/tmp/dir/", "/no/such/directory/file"] {
            do {
                try SubmitValidator.validateDestination(path, overwrite: false)
                Issue.record("\(path) was accepted")
            } catch {
                #expect(error.code == .invalidDestination, "\(path): \(error.message)")
            }
        }
    }

    @Test func refusesAnExistingDestinationWithoutOverwrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("exists")
        _ = FileManager.default.createFile(atPath: path, contents: Data("x".utf8))
        do {
            try SubmitValidator.validateDestination(path, overwrite: false)
            Issue.record("an existing file was accepted without overwrite")
        } catch {
            #expect(error.code == .destinationExists)
            #expect(error.message.contains("overwrite"))
        }
        try SubmitValidator.validateDestination(path, overwrite: true)
    }

    @Test func refusesHeaderInjectionAndReservedHeaders() {
        #expect(throws: RPCError.self) { try SubmitValidator.validateHeaders(["X-A": "a\r\nHost: evil"]) }
        #expect(throws: RPCError.self) { try SubmitValidator.validateHeaders(["Bad Name": "x"]) }
        #expect(throws: RPCError.self) { try SubmitValidator.validateHeaders(["Range": "bytes=5-"]) }
        #expect(throws: Never.self) { try SubmitValidator.validateHeaders(["Authorization": "Bearer x"]) }
    }

    @Test func partialFileNameFitsInAFileName() {
        let long = "/tmp/" + String(repeating: "a", count: 215)
        let partial = PartialPath.for(destination: long, jobID: String(repeating: "b", count: 128))
        let name = partial.split(separator: "/").last.map(String.init) ?? ""
        #expect(name.utf8.count <= 255)
        #expect(partial.hasPrefix("/tmp/."))
    }
}
