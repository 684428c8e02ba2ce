package com.example.locks;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The user's application: nothing of Lockstep in it, the auto-configuration does the rest. */
@SpringBootApplication
public class LocksApplication {
  public static void main(String[] args) {
    SpringApplication.run(LocksApplication.class, args);
  }
}
