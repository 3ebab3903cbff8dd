package io.swagger.v3.oas.annotations;

// A stand-in for swagger-annotations (see media/Schema.java).
@java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.CLASS)
public @interface Parameter {
  String name() default "";
  String description() default "";
  boolean required() default false;
}
