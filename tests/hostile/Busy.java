// SPDX-License-Identifier: MIT
// Busy.java - a JVM program: threads computing, then a result.
public class Busy {
    static long hot(long n) {
        long x = 1;
        for (long i = 0; i < n; i++) x = x * 6364136223846793005L + (i ^ (x >>> 17));
        return x;
    }

    public static void main(String[] args) throws Exception {
        Thread[] t = new Thread[3];
        for (int i = 0; i < t.length; i++) {
            t[i] = new Thread(() -> hot(300_000_000L));
            t[i].start();
        }
        for (Thread th : t) th.join();
        Object o = null;
        int npe = 0;
        for (int i = 0; i < 1000; i++) {
            try { o.hashCode(); } catch (NullPointerException e) { npe++; }
        }
        System.out.println("busy done, NPE caught " + npe);
        System.gc();
    }
}
