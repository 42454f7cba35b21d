def generate(rng): return b""
def judge(d,l): return None
