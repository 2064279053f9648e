// swift-tools-version: 6.2
import PackageDescription

/// Strict settings for every target, in one place.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "transferd",
    products: [
        .executable(name: "transferd", targets: ["transferd"]),
        .executable(name: "transferctl", targets: ["transferctl"]),
        .library(name: "TransferKit", targets: ["TransferKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-http-structured-headers", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        .target(name: "TransferProtocol", dependencies: ["CDescriptorPassing"]),
        // openat2(2), which Swift cannot reach through the variadic syscall(2).
        .target(name: "COpenat2"),
        // malloc_trim(3), and FoundationNetworking's URL host check made to accept IPv6 literals.
        .target(name: "CLinuxShims"),
        // sendmsg/recvmsg with SCM_RIGHTS: transferctl hands an upload's open file to the daemon.
        .target(name: "CDescriptorPassing"),
        .target(name: "TransferKit", dependencies: ["TransferProtocol"]),
        .executableTarget(name: "FeedDownloader", dependencies: ["TransferKit"], path: "Examples/FeedDownloader"),
        .executableTarget(name: "transferkit-probe", dependencies: ["TransferKit"], path: "Tests/TransferKitProbe"),
        .target(
            name: "TransferCore",
            dependencies: [
                "TransferProtocol",
                "COpenat2",
                "CLinuxShims",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "TransferFraming",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // The daemon: configuration and reload, the control socket and its request handlers,
        // systemd, logging and metrics. A library, so that its tests import it.
        .target(
            name: "TransferDaemon",
            dependencies: [
                "TransferProtocol",
                "TransferCore",
                "TransferFraming",
                "CSystemd",
                "CDescriptorPassing",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The daemon's command line, which runs TransferDaemon.
        .executableTarget(
            name: "transferd",
            dependencies: [
                "TransferDaemon",
                "TransferProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // A statically linked FoundationNetworking calls CLinuxShims' host check, pause call,
            // option setters and body coalescing through these (Sources/CLinuxShims/curl_host.c,
            // curl_pause.c, curl_decoding.c, curl_options.c, curl_coalesce.c, curl_sockets.c); a dynamic one finds
            // them by symbol lookup.
            linkerSettings: [
                .unsafeFlags([
                    "-Xlinker", "--wrap=CFURLSessionCurlHostIsEqual",
                    "-Xlinker", "--wrap=CFURLSessionEasyHandleSetPauseState",
                    "-Xlinker", "--wrap=CFURLSession_easy_setopt_long",
                    "-Xlinker", "--wrap=CFURLSession_easy_setopt_ptr",
                    "-Xlinker", "--wrap=CFURLSession_easy_setopt_wc",
                    "-Xlinker", "--wrap=CFURLSessionMultiHandleAction",
                    "-Xlinker", "--wrap=CFURLSessionMultiHandleInfoRead",
                    "-Xlinker", "--wrap=CFURLSessionEasyHandleDeinit",
                    "-Xlinker", "--wrap=CFURLSession_multi_setopt_sf",
                ])
            ]
        ),
        .executableTarget(
            name: "transferctl",
            dependencies: [
                "TransferProtocol",
                "CDescriptorPassing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "TransferTestSupport",
            dependencies: [
                "TransferProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/TransferTestSupport"
        ),
        // libFuzzer targets (Tests/Fuzz/README.md). `make fuzz` builds them with
        // `--sanitize=fuzzer`; a plain build makes programs that replay inputs given as arguments.
        .executableTarget(
            name: "FuzzRequestDecoder",
            dependencies: [
                "TransferProtocol",
                "TransferFraming",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Tests/Fuzz/FuzzRequestDecoder"
        ),
        .executableTarget(
            name: "FuzzJournalRecovery",
            dependencies: ["TransferCore"],
            path: "Tests/Fuzz/FuzzJournalRecovery"
        ),
        // The benchmarks' helper (Tests/Benchmarks/jobtable.sh, and bench.sh's URLSession floor).
        .executableTarget(
            name: "transferd-bench",
            dependencies: ["TransferCore", "TransferProtocol", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Benchmarks/BenchTool"
        ),
        .executableTarget(
            name: "FuzzSubmitToEngine",
            dependencies: ["TransferCore", "TransferProtocol", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Fuzz/FuzzSubmitToEngine"
        ),
        .testTarget(name: "TransferProtocolTests", dependencies: ["TransferProtocol", "TransferTestSupport"]),
        .testTarget(
            name: "TransferCoreTests",
            dependencies: [
                "TransferCore",
                "TransferProtocol",
                "TransferTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "TransferDaemonTests",
            dependencies: [
                "TransferDaemon",
                "TransferCore",
                "TransferProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "TransferProtocol",
                "TransferTestSupport",
                "transferd",
                "transferctl",
                "TransferKit",
                "transferkit-probe",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ]
)

for target in package.targets where target.type != .system && !["COpenat2", "CLinuxShims", "CDescriptorPassing"].contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}
