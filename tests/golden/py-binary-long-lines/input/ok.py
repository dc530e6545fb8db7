def f():
    return "\u00e9té"
