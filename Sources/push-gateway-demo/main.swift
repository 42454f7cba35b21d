import Foundation

// push-gateway-demo: the development companion of scripts/run-local and scripts/demo. Never shipped:
// its iPhone half links the synthetic App Attest CA of the test support library; its Android half
// carries its own synthetic Key Attestation CA (docs/decisions/0741).
exit(DemoCommand.main(arguments: Array(CommandLine.arguments.dropFirst())))
