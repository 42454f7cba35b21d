import PushCrypto
