# Sourced: prepare_dev_environment DIR creates (once) development keys under DIR and exports the
# configuration of a local gateway on embedded defaults: one sandbox profile, keys read through the
# `_FILE` variables, listeners on loopback. Never use these keys anywhere but a developer machine.
prepare_dev_environment() {
    local dir=$1
    mkdir -p "$dir"
    chmod 700 "$dir"
    local ring
    for ring in grant token challenge; do
        [ -s "$dir/$ring.keys" ] || echo "dev-$ring:$(openssl rand -base64 32)" >"$dir/$ring.keys"
    done
    [ -s "$dir/fingerprint.key" ] || openssl rand -base64 32 >"$dir/fingerprint.key"
    [ -s "$dir/apns-auth-key.p8" ] ||
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/apns-auth-key.p8" 2>/dev/null

    export PUSH_GATEWAY_ORIGIN=${PUSH_GATEWAY_ORIGIN:-https://localhost}
    export PUSH_GATEWAY_LISTEN=${PUSH_GATEWAY_LISTEN:-127.0.0.1:8080}
    export PUSH_GATEWAY_HEALTH_LISTEN=${PUSH_GATEWAY_HEALTH_LISTEN:-127.0.0.1:8081}
    export PUSH_GATEWAY_GRANT_KEYS_FILE=$dir/grant.keys
    export PUSH_GATEWAY_TOKEN_KEYS_FILE=$dir/token.keys
    export PUSH_GATEWAY_CHALLENGE_KEYS_FILE=$dir/challenge.keys
    export PUSH_GATEWAY_FINGERPRINT_KEY_FILE=$dir/fingerprint.key
    export PUSH_GATEWAY_PROFILES=dev-sandbox
    export PUSH_GATEWAY_PROFILE_DEV_SANDBOX_APP_ID=ABCDE12345.org.example.pushgateway.dev
    export PUSH_GATEWAY_PROFILE_DEV_SANDBOX_APNS_TOPIC=org.example.pushgateway.dev
    export PUSH_GATEWAY_PROFILE_DEV_SANDBOX_APNS_ENVIRONMENT=sandbox
    export PUSH_GATEWAY_PROFILE_DEV_SANDBOX_APP_ATTEST_ENVIRONMENT=development
    export PUSH_GATEWAY_PROFILE_DEV_SANDBOX_APNS_KEY_FILE=$dir/apns-auth-key.p8
    export PUSH_GATEWAY_PROFILE_DEV_SANDBOX_APNS_KEY_ID=DEVKEY0001
    export PUSH_GATEWAY_PROFILE_DEV_SANDBOX_APNS_TEAM_ID=ABCDE12345
}

# prepare_dev_android_profile DIR adds, beside prepare_dev_environment's sandbox profile, the android
# profile `dev-android` that scripts/run-local serves and `scripts/demo android` plays: a development
# Firebase service account made once under DIR (a fresh RSA key; fcm-mock verifies its assertions),
# the package org.example.pushgateway.dev and a made-up signing-certificate digest. Call it after
# prepare_dev_environment.
DEV_ANDROID_SIGNING_CERT_SHA256=ae4584c6c0b35312c826705e7dac7f3319849af596d4d548a4c5a13666d26afe
prepare_dev_android_profile() {
    local dir=$1 account=$1/fcm-service-account.json
    if [ ! -s "$account" ]; then
        local key
        # The PEM with its line breaks written as \n, as in the JSON files Google hands out.
        key=$(openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 2>/dev/null | awk '{ printf "%s\\n", $0 }')
        printf '{"type":"service_account","project_id":"dev-push-gateway","private_key_id":"dev-key-1","private_key":"%s","client_email":"push-gateway@dev-push-gateway.iam.gserviceaccount.com"}\n' \
            "$key" >"$account.tmp"
        chmod 600 "$account.tmp"
        mv "$account.tmp" "$account"
    fi
    export PUSH_GATEWAY_PROFILES=$PUSH_GATEWAY_PROFILES,dev-android
    export PUSH_GATEWAY_PROFILE_DEV_ANDROID_PLATFORM=android
    export PUSH_GATEWAY_PROFILE_DEV_ANDROID_ANDROID_PACKAGE=org.example.pushgateway.dev
    export PUSH_GATEWAY_PROFILE_DEV_ANDROID_ANDROID_SIGNING_CERT_SHA256=$DEV_ANDROID_SIGNING_CERT_SHA256
    export PUSH_GATEWAY_PROFILE_DEV_ANDROID_FCM_PROJECT_ID=dev-push-gateway
    export PUSH_GATEWAY_PROFILE_DEV_ANDROID_FCM_SERVICE_ACCOUNT_FILE=$account
}
