import Foundation

// push-gateway-demo: the development companion of scripts/run-local and scripts/demo.
// Never shipped: it links the synthetic App Attest CA of the test support library.
exit(DemoCommand.main(arguments: Array(CommandLine.arguments.dropFirst())))
