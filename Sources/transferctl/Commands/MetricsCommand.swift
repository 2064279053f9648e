import ArgumentParser
import TransferProtocol

/// `transferctl metrics`: the daemon's metrics in the Prometheus text format.
struct MetricsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Print transferd's metrics in the Prometheus text format.",
        discussion: """
            For node_exporter's textfile collector, write them to a file and rename it into \
            place, e.g. from a timer: transferctl metrics > DIR/transferd.prom.$$ && mv \
            DIR/transferd.prom.$$ DIR/transferd.prom. The daemon can also serve them over HTTP \
            (metrics_listen). Every metric is described in docs/metrics.md.
            """
    )

    @Flag(help: "Print the answer as one line of JSON ({\"text\": …, \"content_type\": …}).")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func run() async throws {
        let result = try clientOptions.connect().call(MetricsMethod.self, .init())
        if json {
            try JSONOutput.print(result)
        } else {
            StandardOutput.write(result.text)
        }
    }
}
